"""MCP tool servers: the tools users already have, under the same policy (design.md §6.1).

- ``source`` — :class:`~relavium_lsp.mcp.source.McpToolSource`, the registry's tool source for
  ``mcp:`` agent entries and ACP clients' servers; asks to trust project servers.
- ``pool`` — one managed server per definition: lazy start, sharing, restart with backoff,
  per-call deadlines, shutdown; ``connection`` — one live SDK client (stdio or HTTP).
- ``adapter`` — an MCP tool as a ``ToolDefinition``; ``results`` — a call's result as text and
  media; ``prompts`` — prompts as slash commands; ``catalog`` — ``relavium/listTools``.
- ``trust`` — remembered trust per workspace and content hash; ``secrets`` — keychain
  references resolved into env and headers.

Server definitions (``relavium_lsp.config.mcp_servers``) and the config contract
(``relavium_lsp.contracts.mcp``) sit in the lower layers; the SDK is imported only by
``connection``, ``results`` and ``prompts``, lazily, so loading config never pays for it.
"""
