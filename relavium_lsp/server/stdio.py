"""Serving the language server over stdio with the hardened framer (issues 16 and 25).

Replaces pygls's ``start_io`` loop (``pygls.io_.run_async``), keeping its shape — messages
handed to the protocol one at a time, in order, pygls's writer, ``server.shutdown()`` at
the end — but framing through :class:`~relavium_lsp.server.framing.FrameParser` (capped,
resynchronising) and answering what pygls would only log:

* a body that is not JSON goes back to the framer, which skips to the next header;
* a request pygls cannot deserialise (wrong shape for its method) is answered with its
  JSON-RPC error and logged as one line, where pygls logged two tracebacks and never answered;
* JSON that is not a JSON-RPC message (a list, a number, an object without ``jsonrpc``) is
  logged as one line and, when it carries an ``id``, answered ``InvalidRequest``.

**Input is read on the event loop** (:class:`LoopInput`): ``loop.add_reader`` on the stdin
descriptor, one ``os.read`` per readiness, each complete body dispatched right there. A
reader thread handing bodies to the loop cost a thread wake-up per message — on a small,
shared machine p50 0.15 ms, p90 ~2 ms of every request's latency (issue 25). The descriptor
stays blocking (``O_NONBLOCK`` belongs to the open file description, which child processes
may share); a read only follows readiness, so it does not block. Memory stays bounded as
before: the descriptor is read only when the framer needs more to complete a body, so a
flood of input waits in the pipe, not in our memory. A burst of messages is dispatched
:data:`BODIES_PER_LOOP_TURN` per loop turn, the rest following from ``call_soon`` (nothing
read meanwhile), so other work on the loop runs in between, handlers are not started faster
than the reader thread started them, and buffered messages never wait for more input.

Input the loop cannot watch — a regular file (``epoll`` refuses it; ``kqueue`` would never
report its end), a stream without a descriptor — is read by
:class:`~relavium_lsp.server.framing.FrameReader` on a daemon thread instead, one message in
flight between the threads at a time, so a peer that never closes stdin cannot hold the
process open after ``exit``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
import threading
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.io_ import StdoutWriter

from relavium_lsp._compat.pygls import use_stop_event
from relavium_lsp.server.framing import (
    MAX_MESSAGE_BYTES,
    READ_CHUNK_BYTES,
    ByteSource,
    FrameParser,
    FrameReader,
)

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer

logger = logging.getLogger(__name__)

# Bodies dispatched per event-loop turn: a burst of messages must not starve the responses,
# tokens and store replies waiting behind it, nor start handlers faster than they finish.
# One a turn is the pace the reader thread set; 16 let 500 pipelined bad requests pile up as
# concurrent handlers (+30 MiB RSS in tests/unit/attack/test_attack_burst.py, 4: +12 MiB).
BODIES_PER_LOOP_TURN = 1


class Rejecter(Protocol):
    """The framer as :func:`dispatch` sees it: where a body that is not JSON goes back."""

    def reject(self, body: bytes) -> None:
        """Give back a body that was not JSON."""
        ...


class MessageSink(Protocol):
    """The server's protocol as :func:`dispatch` sees it (``core.RelaviumProtocol``)."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Pygls's JSON object hook: a JSON-RPC object becomes its message."""
        ...

    def handle_message(self, message: Any) -> None:
        """Dispatch one message."""
        ...

    def send_error(self, msg_id: int | str, error: JsonRpcException) -> None:
        """Answer a request with an error."""
        ...

    def report_error(self, error: Exception, source: Any) -> None:
        """Report an unexpected failure to the server."""
        ...


def start_framed_io(
    server: RelaviumServer,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    *,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
) -> None:
    """Serve on stdin/stdout until the client exits or closes stdin (pygls's ``start_io``).

    A ``stdin`` with a descriptor is read through that descriptor (not the object's buffer,
    so it must not have been read from).
    """
    quiet_pygls_deserialisation_errors()
    stop_event = threading.Event()
    use_stop_event(server, stop_event)
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    descriptor: int | None
    stream: ByteSource
    if stdin is None:
        descriptor = sys.stdin.buffer.fileno()
        stream = DescriptorStream(descriptor)
    else:
        descriptor, stream = descriptor_of(stdin), stdin
    try:
        asyncio.run(
            serve_frames(
                stop_event,
                server.protocol,
                stream=stream,
                descriptor=descriptor,
                max_message_bytes=max_message_bytes,
            )
        )
    except BrokenPipeError:
        logger.error("the connection to the client is lost (broken pipe); shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]


def descriptor_of(stream: object) -> int | None:
    """The stream's file descriptor, or None when it has none (an in-memory stream)."""
    fileno = getattr(stream, "fileno", None)
    if fileno is None:
        return None
    try:
        descriptor = fileno()
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return None
    return descriptor if isinstance(descriptor, int) and descriptor >= 0 else None


def is_stream_descriptor(descriptor: int) -> bool:
    """Whether ``descriptor`` is a pipe, socket or terminal: input an event loop can watch."""
    try:
        mode = os.fstat(descriptor).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class DescriptorStream:
    """Reads a file descriptor with ``os.read``: no buffered-reader lock to hold.

    The fallback reader thread is a daemon blocked in a read when the server exits; inside
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
    stop_event: threading.Event,
    protocol: MessageSink,
    *,
    stream: ByteSource,
    descriptor: int | None,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
) -> None:
    """Hand each message on the input to ``protocol`` until input ends or the server stops.

    Watches ``descriptor`` on the event loop when it can (:class:`LoopInput`); otherwise
    reads ``stream`` on a thread (:func:`serve_from_thread`).
    """
    if stop_event.is_set():
        return
    if descriptor is not None:
        loop_input = LoopInput(
            descriptor, FrameParser(max_message_bytes=max_message_bytes), protocol, stop_event
        )
        if loop_input.start():
            try:
                await loop_input.finished
            finally:
                loop_input.close()
            return
    reader = FrameReader(stream, max_message_bytes=max_message_bytes)
    await serve_from_thread(stop_event, reader, protocol)


class LoopInput:
    """The client's input read and dispatched on the event loop (see the module docstring).

    :attr:`finished` completes when input ends or the stop event is set after a message; it
    carries the ``SystemExit`` of an ``exit`` notification (or an unexpected error) so it is
    raised where a reader thread's loop raised it.
    """

    def __init__(
        self,
        descriptor: int,
        parser: FrameParser,
        protocol: MessageSink,
        stop_event: threading.Event,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._descriptor = descriptor
        self._parser = parser
        self._protocol = protocol
        self._stop_event = stop_event
        self._watching = False
        self._draining = False  # a _dispatch_ready is scheduled: complete bodies may be held
        self.finished: asyncio.Future[None] = self._loop.create_future()

    def start(self) -> bool:
        """Watch the descriptor; False when the loop cannot (e.g. a regular file)."""
        if not is_stream_descriptor(self._descriptor):
            # A regular file is always "readable": epoll refuses it, and kqueue (macOS) would
            # never report its end, so the server would not exit at the end of the file.
            logger.info(
                "the event loop cannot watch the client's input (not a pipe, socket or "
                "terminal); reading it on a thread"
            )
            return False
        try:
            self._loop.add_reader(self._descriptor, self._on_readable)
        except (OSError, ValueError, NotImplementedError) as error:
            logger.info(
                "the event loop cannot watch the client's input (%s); reading it on a thread",
                error,
            )
            return False
        self._watching = True
        return True

    def close(self) -> None:
        """Stop watching the descriptor (idempotent)."""
        if self._watching:
            self._watching = False
            self._loop.remove_reader(self._descriptor)

    def _on_readable(self) -> None:
        if self._draining:
            return  # bodies already read go first: nothing more is read (or held) until then
        try:
            chunk = os.read(self._descriptor, READ_CHUNK_BYTES)
        except (BlockingIOError, InterruptedError):
            return  # nothing to read after all (another reader of a shared pipe): wait again
        except OSError as error:
            logger.warning("reading the client's input failed (%s); treating it as closed", error)
            chunk = b""
        if chunk:
            self._parser.feed(chunk)
        else:
            self._parser.feed_eof()
        self._dispatch_ready()

    def _dispatch_ready(self) -> None:
        """Dispatch up to :data:`BODIES_PER_LOOP_TURN` complete bodies, then read or go on."""
        self._draining = False
        if self.finished.done():
            return
        if self._stop_event.is_set():  # set elsewhere meanwhile: dispatch nothing more
            self._finish()
            return
        try:
            for _ in range(BODIES_PER_LOOP_TURN):
                body = self._parser.next_body()
                if body is None:
                    if self._parser.ended:
                        logger.info("the client closed the server's input; exiting")
                        self._finish()
                    return  # otherwise the framer needs more input: the next readiness reads
                dispatch(body, self._parser, self._protocol)
                if self._stop_event.is_set():
                    self._finish()
                    return
        except (Exception, SystemExit) as error:  # SystemExit: pygls's answer to ``exit``
            self._finish(error)
            return
        if self._parser.buffered_bytes == 0:
            return  # the usual case, one message per read: nothing more can be complete
        # More may be complete already: let the loop run, then carry on without waiting for
        # new input (and without reading any: see _on_readable).
        self._draining = True
        self._loop.call_soon(self._dispatch_ready)

    def _finish(self, error: BaseException | None = None) -> None:
        self.close()
        if self.finished.done():
            return
        if error is None:
            self.finished.set_result(None)
        else:
            self.finished.set_exception(error)


async def serve_from_thread(
    stop_event: threading.Event, reader: FrameReader, protocol: MessageSink
) -> None:
    """Read on a daemon thread, hand each body to the loop: for input the loop cannot watch."""
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


def dispatch(body: bytes, reader: Rejecter, protocol: MessageSink) -> None:
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
        protocol.report_error(error, JsonRpcException)


def _answer_undeserialisable(body: bytes, error: JsonRpcException, protocol: MessageSink) -> None:
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
        protocol.send_error(request_id, error)


def _answer_not_jsonrpc(message: Any, protocol: MessageSink) -> None:
    kind = type(message).__name__
    logger.info("the client sent JSON that is not a JSON-RPC message (a %s)", kind)
    if isinstance(message, dict) and isinstance(message.get("id"), int | str):
        error = JsonRpcInvalidRequest("not a JSON-RPC 2.0 message")
        protocol.send_error(message["id"], error)
