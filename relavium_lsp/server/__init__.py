"""The language server: a thin pygls adapter from LSP to the engine's front door.

``core`` holds :class:`~relavium_lsp.server.core.RelaviumServer`; ``features/`` one module per
concern (lifecycle and opening the engine, editor context, session requests, export,
``workspace/executeCommand``), each with ``setup(server)``; ``app`` builds a server with every
feature. ``handlers`` and ``errors`` validate params and map errors to JSON-RPC at the edge,
``methods`` names every custom method, ``state`` is what the server remembers per client.
"""
