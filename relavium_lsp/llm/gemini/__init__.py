"""Google Gemini's native API (``streamGenerateContent``): mapping, decoding, the adapters.

The same wire format serves Gemini's API with an API key
(:class:`~relavium_lsp.llm.gemini.provider.GeminiProvider`) and Vertex AI with Google
credentials (:mod:`relavium_lsp.llm.vertex`). Loaded only when such a provider is built.
"""
