"""The server object every feature registers on: :class:`RelaviumServer` and its converter.

Features import this module (never :mod:`relavium_lsp.server.app`); ``app`` imports the
features and wires them onto a fresh server, so dependencies point one way:
``app → features → core``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

from cattrs import Converter
from lsprotocol import types
from pygls.exceptions import JsonRpcMethodNotFound
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
    lsp_method,
)

from relavium_lsp import __version__
from relavium_lsp.contracts.versions import PROTOCOL_VERSION
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


def relavium_server_capabilities() -> dict[str, Any]:
    """``capabilities.experimental.relavium`` of the ``initialize`` result.

    A plain dict (``initialize`` loads no pydantic); its shape is
    :class:`~relavium_lsp.contracts.wire.RelaviumServerCapabilities`, which a test checks.
    """
    return {"protocolVersion": PROTOCOL_VERSION}


class RelaviumProtocol(LanguageServerProtocol):
    """pygls's protocol, loading the deferred features before a message could miss them.

    Cold start: see :mod:`relavium_lsp.server.app`. pygls looks every incoming method up
    here before dispatching it; a method not registered yet loads the deferred features once
    and is looked up again, so only a truly unknown method is "method not found".

    Its ``initialize`` answer also carries the protocol version
    (``capabilities.experimental.relavium``, :mod:`relavium_lsp.contracts.versions`);
    ``serverInfo`` is pygls's, from the server's name and version.
    """

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        """The ``initialize`` result of pygls, with the relavium capability added."""
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        experimental = result.capabilities.experimental
        extra = dict(experimental) if isinstance(experimental, dict) else {}
        result.capabilities.experimental = {**extra, "relavium": relavium_server_capabilities()}
        return result

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

    def __init__(
        self,
        state: ServerState | None = None,
        *,
        deferred: Callable[[RelaviumServer], None] | None = None,
    ) -> None:
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
        # Commands with an implementation of their own (see features/commands.py).
        self.command_handlers: dict[str, RawHandler] = {}
        self._deferred = deferred

    def load_deferred_features(self) -> bool:
        """Register the features left out at start-up (once); False if there were none left."""
        deferred, self._deferred = self._deferred, None
        if deferred is None:
            return False
        deferred(self)
        return True
