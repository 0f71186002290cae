"""Google Vertex AI: Gemini and Anthropic's Claude models with Google credentials.

:mod:`~relavium_lsp.llm.vertex.credentials` finds Google credentials with ``google-auth``
(an optional extra, ``relavium-lsp[vertex]``, imported only when a Vertex provider makes its
first call); :mod:`~relavium_lsp.llm.vertex.provider` speaks Gemini's
``streamGenerateContent`` and Anthropic's Messages (``streamRawPredict``) under Vertex URLs.
"""
