"""The Agent Client Protocol (ACP) face of the engine: ``relavium-lsp acp``.

ACP is the JSON-RPC protocol editors such as Zed and JetBrains use to drive coding agents.
This package is a sibling of :mod:`relavium_lsp.server` — a thin adapter over the same
engine, store and tools — so sessions opened here are the same encrypted, resumable
sessions the LSP surface lists, and the other way round.

- :mod:`~relavium_lsp.acp.agent` — the ACP ``Agent`` (initialize, session lifecycle, prompt);
- :mod:`~relavium_lsp.acp.connection` — the agent side of the JSON-RPC connection;
- :mod:`~relavium_lsp.acp.client_profile` — which ``session/update`` kinds a client knows;
- :mod:`~relavium_lsp.acp.session_config` / :mod:`~relavium_lsp.acp.settings` — the approval
  mode and model as session modes and config options;
- :mod:`~relavium_lsp.acp.commands` — slash commands;
- :mod:`~relavium_lsp.acp.updates` — engine events → ``session/update`` notifications;
- :mod:`~relavium_lsp.acp.replay` — stored transcripts → ``session/update`` (``session/load``);
- :mod:`~relavium_lsp.acp.tool_calls` — what the client is shown about a tool call;
- :mod:`~relavium_lsp.acp.host` — the editor host: client ``fs/*`` or jail-checked disk,
  approvals through ``session/request_permission``;
- :mod:`~relavium_lsp.acp.permissions` — permission options ↔ approval decisions;
- :mod:`~relavium_lsp.acp.prompt_content` — prompt content blocks → the user message;
- :mod:`~relavium_lsp.acp.outbox` — ordered delivery of notifications;
- :mod:`~relavium_lsp.acp.stdio` — the stdio transport (stdout kept for the protocol alone).
"""
