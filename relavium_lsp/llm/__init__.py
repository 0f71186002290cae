"""The LLM seam, provider adapters, cassettes, fallback and pricing.

- :mod:`~relavium_lsp.llm.seam` — the provider-neutral types (requests, chunks, errors).
- :mod:`~relavium_lsp.llm.projection` — stored messages → seam messages.
- :mod:`~relavium_lsp.llm.openai_compat` / :mod:`~relavium_lsp.llm.anthropic` — the two
  streaming HTTP adapters (wire mapping in ``openai_wire`` / ``anthropic_wire``; shared HTTP
  error handling in ``http_call``; SSE parsing in ``sse``; key scrubbing in ``redaction``).
- :mod:`~relavium_lsp.llm.cassette` / :mod:`~relavium_lsp.llm.offline` — record and replay;
  the bundled offline demo model (recorded from ``demo_script`` by
  :mod:`relavium_lsp.testing.record_demo`).
- :mod:`~relavium_lsp.llm.fallback` — the primary → fallback chain.
- :mod:`~relavium_lsp.llm.catalog` / :mod:`~relavium_lsp.llm.pricing` — prices and windows.
- :mod:`~relavium_lsp.llm.keys` / :mod:`~relavium_lsp.llm.providers` — keys, configuration →
  providers, agent → chain.

The scripted loopback HTTP server used by tests, benchmarks and recording lives in
:mod:`relavium_lsp.testing`, outside this package.
"""
