"""The language server: a thin adapter from LSP to the session engine.

Handlers live in ``features/`` (one module per feature, each with ``setup(server)``); this
module only builds the server object and wires the features together.

Cold start (issue 25). pygls itself costs most of a start (lsprotocol's types); what the
server adds must stay within 10 % of that to the ``initialize`` result. pydantic, the
contracts and everything the session features import would add about 40 %, and none of it
is needed to answer ``initialize``: the capabilities come from the *eager* features —
lifecycle, document tracking and the ``workspace/executeCommand`` names — which import
neither. The session and export requests are *deferred*: :meth:`RelaviumServer.
load_deferred_features` imports and registers them, once, either right after ``initialize``
(the ``initialized`` notification) or when a message for one of them arrives first
(:class:`RelaviumProtocol` asks before pygls would answer "method not found"). Either way it
happens before the message is dispatched, so no request can miss its handler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cattrs import Converter
from pygls.exceptions import JsonRpcMethodNotFound
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)

from relavium_lsp import __version__
from relavium_lsp.server.state import ServerState

if TYPE_CHECKING:
    from relavium_lsp.server.handlers import RawHandler


def _keep_params_as_dicts(obj: dict[str, Any], cls: type[Any]) -> Any:
    return cls(**obj)


def relavium_converter() -> Converter:
    """The pygls converter, except that custom messages keep plain dicts.

    Custom requests, notifications and the client's answers to our custom requests would
    otherwise become namedtuples; we validate dicts with pydantic instead. Standard LSP
    messages are unaffected: they have registered lsprotocol types.
    """
    converter: Converter = default_converter()  # type: ignore[no-untyped-call]
    for message_type in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(message_type, _keep_params_as_dicts)
    return converter


class RelaviumProtocol(LanguageServerProtocol):
    """pygls's protocol, loading the deferred features before a message could miss them."""

    def _get_handler(self, feature_name: str) -> Any:
        try:
            return super()._get_handler(feature_name)
        except JsonRpcMethodNotFound:
            server = self._server
            if not isinstance(server, RelaviumServer) or not server.load_deferred_features():
                raise
            return super()._get_handler(feature_name)


class RelaviumServer(LanguageServer):
    """The relavium-lsp server; all session state lives in :attr:`state`."""

    def __init__(self, state: ServerState | None = None) -> None:
        super().__init__(
            "relavium-lsp",
            __version__,
            protocol_cls=RelaviumProtocol,
            converter_factory=relavium_converter,
            max_workers=4,
        )
        self.state = state or ServerState()
        # Custom request handlers by method, reused by workspace/executeCommand.
        self.request_handlers: dict[str, RawHandler] = {}
        self._deferred_loaded = False

    def load_deferred_features(self) -> bool:
        """Import and register the session and export features; False if already done.

        Also settles the initialization options (pydantic validation, with a warning for
        anything invalid), which ``initialize`` only stored.
        """
        if self._deferred_loaded:
            return False
        self._deferred_loaded = True
        from relavium_lsp.server.features import context, export, lifecycle, sessions

        lifecycle.settle_initialization(self)
        for feature in (sessions, export):
            feature.setup(self)
        context.setup_editor_state(self)
        return True


def create_server(state: ServerState | None = None) -> RelaviumServer:
    """Build a server with the eager features registered (the rest load on first use)."""
    from relavium_lsp.server.features import commands, context, lifecycle

    server = RelaviumServer(state)
    for feature in (lifecycle, context, commands):
        feature.setup(server)
    return server
