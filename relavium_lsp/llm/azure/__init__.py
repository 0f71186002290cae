"""Azure OpenAI: deployments, ``api-version``, API keys or Entra ID tokens, content filters.

Both Chat Completions and the Responses API are spoken, with Azure's URLs and auth
(:mod:`~relavium_lsp.llm.azure.provider`), Entra ID tokens from the keychain or the
client-credentials environment (:mod:`~relavium_lsp.llm.azure.entra`), and Azure's
content-filter reports turned into errors that name the filter
(:mod:`~relavium_lsp.llm.azure.filters`). Loaded only when an Azure provider is built.
"""
