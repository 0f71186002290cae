"""The server object every feature registers on: :class:`RelaviumServer` and its converter.

Features import this module (never :mod:`relavium_lsp.server.app`); ``app`` imports the
features and wires them onto a fresh server, so dependencies point one way:
``app → features → core``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cattrs import Converter
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
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


class RelaviumServer(LanguageServer):
    """The relavium-lsp server; all session state lives in :attr:`state`."""

    def __init__(self, state: ServerState | None = None) -> None:
        super().__init__(
            "relavium-lsp", __version__, converter_factory=relavium_converter, max_workers=4
        )
        self.state = state or ServerState()
        # Custom request handlers by method, reused by workspace/executeCommand.
        self.request_handlers: dict[str, RawHandler] = {}
