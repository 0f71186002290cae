"""Serving the language server over stdio with the hardened reader (issue 16).

Replaces pygls's ``start_io`` loop (``pygls.io_.run_async``), keeping its shape — one message
read, parsed and handed to the protocol at a time, pygls's writer, ``server.shutdown()`` at
the end — but reading through :class:`~relavium_lsp.server.framing.FrameReader` (capped,
resynchronising) and answering what pygls would only log:

* a body that is not JSON goes back to the reader, which skips to the next header;
* a request pygls cannot deserialise (wrong shape for its method) is answered with its
  JSON-RPC error and logged as one line, where pygls logged two tracebacks and never answered;
* JSON that is not a JSON-RPC message (a list, a number, an object without ``jsonrpc``) is
  logged as one line and, when it carries an ``id``, answered ``InvalidRequest``.

The reader blocks in a daemon thread, so a peer that never closes stdin cannot hold the
process open after ``exit``; one message is in flight between the threads at a time, so a
flood of input waits in the pipe, not in our memory.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
from typing import TYPE_CHECKING, Any, BinaryIO

from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.io_ import StdoutWriter

from relavium_lsp.server.framing import MAX_MESSAGE_BYTES, FrameReader

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer
    from pygls.protocol import JsonRPCProtocol

logger = logging.getLogger(__name__)


def start_framed_io(
    server: LanguageServer,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    *,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
) -> None:
    """Serve on stdin/stdout until the client exits or closes stdin (pygls's ``start_io``)."""
    quiet_pygls_deserialisation_errors()
    stop_event = threading.Event()
    server._stop_event = stop_event
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    source = stdin if stdin is not None else DescriptorStream(sys.stdin.buffer.fileno())
    reader = FrameReader(source, max_message_bytes=max_message_bytes)
    try:
        asyncio.run(serve_frames(stop_event, reader, server.protocol))
    except BrokenPipeError:
        logger.error("the connection to the client is lost (broken pipe); shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]


class DescriptorStream:
    """Reads a file descriptor with ``os.read``: no buffered-reader lock to hold.

    The reader thread is a daemon blocked in a read when the server exits; blocked inside
    ``sys.stdin.buffer`` it would hold that object's lock, and interpreter shutdown aborts
    with "could not acquire lock for <stdin>" (SIGABRT, a fatal error on stderr).
    """

    def __init__(self, descriptor: int) -> None:
        self._descriptor = descriptor

    def read1(self, size: int) -> bytes:
        """Up to ``size`` bytes, blocking until at least one (empty at end of input)."""
        return os.read(self._descriptor, size)

    def read(self, size: int) -> bytes:
        """Same as :meth:`read1` (the reader only asks for what is available)."""
        return os.read(self._descriptor, size)


class _DeserialisationNoiseFilter(logging.Filter):
    """Drops pygls's traceback for a message it cannot deserialise.

    :func:`dispatch` answers and logs such a message as one line of its own (a bad client
    must not flood the log with tracebacks).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep every record but pygls's "Unable to deserialize message" one."""
        return not str(record.msg).startswith("Unable to deserialize message")


def quiet_pygls_deserialisation_errors() -> None:
    """Install :class:`_DeserialisationNoiseFilter` on pygls's JSON-RPC logger (once)."""
    rpc_logger = logging.getLogger("pygls.protocol.json_rpc")
    if not any(isinstance(item, _DeserialisationNoiseFilter) for item in rpc_logger.filters):
        rpc_logger.addFilter(_DeserialisationNoiseFilter())


async def serve_frames(
    stop_event: threading.Event, reader: FrameReader, protocol: JsonRPCProtocol
) -> None:
    """Hand each message the reader produces to ``protocol`` until input ends."""
    loop = asyncio.get_running_loop()
    bodies: asyncio.Queue[bytes | None] = asyncio.Queue()
    handed = threading.Semaphore(0)

    def pump() -> None:
        # Runs on the reader thread; waits for each body to be dispatched before reading on.
        try:
            while True:
                body = reader.next_body()
                loop.call_soon_threadsafe(bodies.put_nowait, body)
                if body is None:
                    return
                handed.acquire()
        except RuntimeError:
            return  # the loop closed under us: the server is exiting

    threading.Thread(target=pump, name="relavium-stdin", daemon=True).start()
    while not stop_event.is_set():
        body = await bodies.get()
        if body is None:
            logger.info("the client closed the server's input; exiting")
            break
        try:
            dispatch(body, reader, protocol)
        finally:
            handed.release()


def dispatch(body: bytes, reader: FrameReader, protocol: JsonRPCProtocol) -> None:
    """Parse one body and hand it to pygls, answering what pygls would drop."""
    try:
        message: Any = json.loads(body, object_hook=protocol.structure_message)
    except JsonRpcException as error:
        _answer_undeserialisable(body, error, protocol)
        return
    except ValueError:  # not JSON at all (UnicodeDecodeError is a ValueError too)
        reader.reject(body)
        return
    if not hasattr(message, "jsonrpc"):
        _answer_not_jsonrpc(message, protocol)
        return
    try:
        protocol.handle_message(message)
    except Exception as error:  # an unexpected failure: keep its traceback, report it
        logger.exception("unable to handle a message from the client")
        report = getattr(protocol._server, "_report_server_error", None)
        if report is not None:
            report(error, JsonRpcException)


def _answer_undeserialisable(body: bytes, error: JsonRpcException, protocol: Any) -> None:
    raw: Any = json.loads(body)
    request_id = raw.get("id") if isinstance(raw, dict) else None
    method = raw.get("method") if isinstance(raw, dict) else None
    if not isinstance(request_id, int | str):
        request_id = None
    # INFO: the client's mistake, answered; stderr (the editor's output) stays quiet.
    logger.info(
        "a %s from the client could not be read as %r (JSON-RPC %s: %s)",
        "request" if request_id is not None else "message",
        method,
        error.code,
        error.message,
    )
    if request_id is not None and method is not None:
        protocol._send_response(request_id, error=error.to_response_error())


def _answer_not_jsonrpc(message: Any, protocol: Any) -> None:
    kind = type(message).__name__
    logger.info("the client sent JSON that is not a JSON-RPC message (a %s)", kind)
    if isinstance(message, dict) and isinstance(message.get("id"), int | str):
        error = JsonRpcInvalidRequest("not a JSON-RPC 2.0 message")
        protocol._send_response(message["id"], error=error.to_response_error())
