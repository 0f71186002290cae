"""The language server: a thin adapter from LSP to the session engine.

Handlers live in ``features/`` (one module per feature, each with ``setup(server)``); the
server class lives in :mod:`~relavium_lsp.server.core`; this module only builds a server and
registers the features on it.
"""

from __future__ import annotations

from relavium_lsp.server.core import RelaviumServer
from relavium_lsp.server.features import (
    code_actions,
    commands,
    configuration,
    context,
    export,
    lifecycle,
    models,
    sessions,
    tools,
)
from relavium_lsp.server.state import ServerState

# Registration order: ``commands`` last, it mirrors every request registered before it.
FEATURES = (
    lifecycle,
    context,
    configuration,
    sessions,
    tools,
    export,
    models,
    code_actions,
    commands,
)


def create_server(state: ServerState | None = None) -> RelaviumServer:
    """Build a server with every feature registered."""
    server = RelaviumServer(state)
    for feature in FEATURES:
        feature.setup(server)
    return server
