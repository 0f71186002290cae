"""The OpenAI Responses API (``/v1/responses``): request mapping, stream decoding, the adapter.

Used for OpenAI's own endpoint (``api = "responses"``, or a model the catalog says needs it)
and, through :mod:`relavium_lsp.llm.azure`, for Azure OpenAI deployments. Loaded only when
such a provider is built.
"""
