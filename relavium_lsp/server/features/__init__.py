"""Server features: one module per concern, each exposing ``setup(server)``.

``lifecycle`` (initialize, shutdown, opening the engine), ``context`` (documents, focus,
selection), ``editor_host`` (the engine's view of the LSP client), ``sessions`` and
``export`` (the ``relavium/*`` requests), ``commands`` (the same as executeCommand commands).
Features import :mod:`relavium_lsp.server.core`, never :mod:`relavium_lsp.server.app`.
"""
