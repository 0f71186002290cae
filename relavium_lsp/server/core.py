"""The server object every feature registers on: :class:`RelaviumServer` and its converter.

Features import this module (never :mod:`relavium_lsp.server.app`); ``app`` imports the
features and wires them onto a fresh server, so dependencies point one way:
``app → features → core``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

from cattrs import Converter
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
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
from relavium_lsp.log_secrets import register_secret
from relavium_lsp.server.state import ServerState

if TYPE_CHECKING:
    from pygls.io_ import AsyncWriter, Writer

    from relavium_lsp.server.handlers import RawHandler


# pygls's own logger: a DEBUG log shows our messages exactly as it shows pygls's.
_rpc_logger = logging.getLogger("pygls.protocol.json_rpc")


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


# A param that carries a secret (``relavium/setupModel``'s key, also as the
# ``relavium.setupModel`` command's argument): registered as one the moment it arrives.
SECRET_PARAM = "apiKey"  # noqa: S105 (the name of a param, not a secret)


def register_secret_params(params: Any) -> None:
    """Make every log record redact the ``apiKey`` of a request's params or command arguments."""
    if isinstance(params, dict):
        candidates = [params]
    else:  # workspace/executeCommand: the params object is the command's argument
        arguments = getattr(params, "arguments", None)
        candidates = [item for item in arguments or () if isinstance(item, dict)]
    for candidate in candidates:
        value = candidate.get(SECRET_PARAM)
        if isinstance(value, str):
            register_secret(value)


def relavium_server_capabilities() -> dict[str, Any]:
    """``capabilities.experimental.relavium`` of the ``initialize`` result.

    A plain dict (``initialize`` loads no pydantic); its shape is
    :class:`~relavium_lsp.contracts.wire.RelaviumServerCapabilities`, which a test checks.
    """
    return {"protocolVersion": PROTOCOL_VERSION}


class RelaviumProtocol(LanguageServerProtocol):
    """pygls's protocol with what the server adds, on pygls's public surface only.

    - Deferred features (cold start, see :mod:`relavium_lsp.server.app`): a message for a
      method with no handler yet loads them once before pygls dispatches it, so only a truly
      unknown method is "method not found".
    - :meth:`notify_json` and :meth:`send_error`: messages whose content is plain JSON already,
      written without pygls's converter pass (a token notification's largest cost: it walks
      and copies the whole params again), the same bytes ``notify`` would write.
    - The ``initialize`` answer carries the protocol version
      (``capabilities.experimental.relavium``, :mod:`relavium_lsp.contracts.versions`);
      ``serverInfo`` is pygls's, from the server's name and version.
    - A message's secret params are registered before pygls sees it
      (:func:`register_secret_params`), so no log line — pygls's at DEBUG included — can
      hold them.
    """

    def __init__(self, server: LanguageServer, converter: Converter) -> None:
        super().__init__(server, converter)
        self.language_server = server
        self.include_headers = True
        # An asynchronous writer's (websocket) pending sends, kept referenced until done.
        self._pending_writes: set[asyncio.Future[Any]] = set()

    def set_writer(self, writer: AsyncWriter | Writer, include_headers: bool = True) -> None:
        """Pygls's ``set_writer``, remembering whether messages carry headers."""
        super().set_writer(writer, include_headers)
        self.include_headers = include_headers

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

    def has_handler(self, method: str) -> bool:
        """Whether a handler for ``method`` is registered (pygls's builtin ones included)."""
        return method in self.fm.builtin_features or method in self.fm.features

    def ensure_handler(self, method: str) -> bool:
        """Whether ``method`` has a handler, after loading the deferred features if it had none."""
        if self.has_handler(method):
            return True
        server = self.language_server
        if not isinstance(server, RelaviumServer) or not server.load_deferred_features():
            return False
        return self.has_handler(method)

    def handle_message(self, message: Any) -> None:
        """Register the message's secrets and load the deferred features it needs, then dispatch.

        The secrets first: pygls may log the message as it dispatches it.
        """
        register_secret_params(getattr(message, "params", None))
        method = getattr(message, "method", None)
        if isinstance(method, str) and not method.startswith("$/"):  # $/: protocol plumbing
            self.ensure_handler(method)
        super().handle_message(message)

    def notify_json(self, method: str, params: dict[str, Any]) -> None:
        """``notify(method, params)`` for ``params`` made of JSON types only."""
        _rpc_logger.debug("Sending notification: '%s' %s", method, params)
        # The key order of pygls's unstructured JsonRPCNotification.
        self.write_json({"method": method, "jsonrpc": self.VERSION, "params": params})

    def send_error(self, msg_id: int | str, error: JsonRpcException) -> None:
        """Answer request ``msg_id`` with ``error`` (a request pygls could not dispatch)."""
        answer = error.to_response_error()
        detail: dict[str, Any] = {"code": answer.code, "message": answer.message}
        if answer.data is not None:
            detail["data"] = answer.data
        self.write_json({"id": msg_id, "jsonrpc": self.VERSION, "error": detail})

    def report_error(self, error: Exception, source: Any) -> None:
        """Hand ``error`` to the server's reporter, which must not fail in turn."""
        try:
            self.language_server.report_server_error(error, source)
        except Exception:
            _rpc_logger.warning("Failed to report error")

    def write_json(self, message: dict[str, Any]) -> None:
        """Write one message as pygls writes its own: same framing, logging and failures."""
        writer = self.writer
        if writer is None:
            _rpc_logger.error("Unable to send data, no available transport!")
            return
        try:
            body = json.dumps(message)
            _rpc_logger.info("Sending data: %s", body)
            if self.include_headers:
                header = (
                    f"Content-Length: {len(body)}\r\n"
                    f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
                )
                body = header + body
            sent = writer.write(body.encode(self.CHARSET))
            if inspect.isawaitable(sent):
                future = asyncio.ensure_future(sent)
                self._pending_writes.add(future)
                future.add_done_callback(self._pending_writes.discard)
        except BrokenPipeError:
            _rpc_logger.exception("Error sending data. BrokenPipeError", exc_info=True)
            raise
        except Exception as error:
            _rpc_logger.exception("Error sending data", exc_info=True)
            self.report_error(error, JsonRpcInternalError)


class RelaviumServer(LanguageServer):
    """The relavium-lsp server; all session state lives in :attr:`state`."""

    protocol: RelaviumProtocol  # built by pygls from ``protocol_cls`` below

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
