"""The LLM seam, provider adapters, cassettes, fallback and pricing.

- :mod:`~relavium_lsp.llm.seam` — the provider-neutral types (requests, chunks, errors).
- :mod:`~relavium_lsp.llm.projection` — stored messages → seam messages.
- ``openai/``, ``anthropic/``, ``responses/``, ``azure/``, ``gemini/``, ``bedrock/``,
  ``vertex/`` — the streaming HTTP adapters, each its ``provider`` and, where its format is
  its own, its request body (``wire``) and stream decoder (``stream``); ``http/`` is what they
  share (the base classes and the call, request authorization, SSE and JSON event parsing,
  the stream guard, key scrubbing).
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
