"""The language server: a thin adapter from LSP to the session engine.

Handlers live in ``features/`` (one module per feature, each with ``setup(server)``); the
server class lives in :mod:`~relavium_lsp.server.core`; this module only builds a server and
registers the features on it.

Cold start (issue 25). pygls itself costs most of a start (lsprotocol's types); what the
server adds must stay within 10 % of that to the ``initialize`` result. pydantic, the
contracts and everything the session features import would add about 35 %, and none of it is
needed to answer ``initialize``: the capabilities come from the :data:`EAGER` features —
lifecycle, document tracking and the ``workspace/executeCommand`` names — which import
neither. The session and export features are *deferred*: :func:`load_deferred_features`
imports and registers them, once, right after ``initialize`` (the ``initialized``
notification) or when a message for one of them arrives first (``core.RelaviumProtocol``
asks before pygls would answer "method not found"). Either way it happens before the message
is dispatched, so no request can miss its handler.
"""

from __future__ import annotations

from relavium_lsp.server.core import RelaviumServer
from relavium_lsp.server.features import code_actions, commands, context, lifecycle
from relavium_lsp.server.state import ServerState

# Registered at start-up: what ``initialize`` must already know (its capabilities list the
# code-action provider and every command name, see ``commands``), all of it light to import.
EAGER = (lifecycle, context, code_actions, commands)


def load_deferred_features(server: RelaviumServer) -> None:
    """Validate the stored initialization options, then register the session features."""
    # The heavy imports (see the module doc).
    from relavium_lsp.server.features import (
        chat_ui,
        configuration,
        export,
        model_setup,
        models,
        replay,
        rewind,
        selection_chat,
        session_model,
        sessions,
        tools,
        workspace_memory,
    )

    lifecycle.settle_initialization(server)
    for feature in (
        configuration,
        sessions,
        tools,
        export,
        models,
        selection_chat,
        rewind,
        session_model,
        chat_ui,
        workspace_memory,
        model_setup,
        replay,
    ):
        feature.setup(server)
    context.setup_editor_state(server)


def create_server(state: ServerState | None = None) -> RelaviumServer:
    """Build a server with the eager features registered (the rest load on first use)."""
    server = RelaviumServer(state, deferred=load_deferred_features)
    for feature in EAGER:
        feature.setup(server)
    return server
