"""A scripted HTTP/1.1 server on 127.0.0.1 for recording cassettes, benchmarks and tests.

It speaks real HTTP over a real socket (keep-alive, chunked streaming bodies), so provider
adapters are exercised exactly as against a remote API, while every response is scripted:

.. code-block:: python

    with LoopbackServer() as server:
        server.script(openai_stream(text=["Hel", "lo"]))   # see relavium_lsp.testing.wire_scripts
        provider = OpenAICompatibleProvider("openai", base_url=server.url + "/v1", ...)
        ...
        request = server.requests[0]          # method, path, headers, body, json()
        await server.wait_for_disconnect(0)   # the client closed that connection

The server runs its own event loop in a daemon thread, so it keeps answering whatever the
caller's loop is doing (a test awaiting a subprocess, a synchronous benchmark, …). Responses
come from the queue filled by :meth:`LoopbackServer.script`, or from a ``responder`` function
given to the constructor; with neither, the server answers 500 and records the miss.

A :class:`ScriptedResponse` can end normally, ``stall`` (headers and body sent, then silence
until the client hangs up — for timeouts and cancellation), ``close`` the connection before
the body is complete, or ``reset`` it (TCP RST).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from types import TracebackType
from typing import Any, Literal

Ending = Literal["complete", "stall", "close", "reset"]


@dataclass(frozen=True)
class ScriptedResponse:
    """One scripted answer. An iterable ``body`` is sent as chunked transfer, piece by piece."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | Iterable[bytes] = b""
    ending: Ending = "complete"
    # A slow model: the pause before each body piece after the first (chunked bodies only).
    piece_delay_s: float = 0.0


@dataclass
class ReceivedRequest:
    """A request as the server received it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    disconnected: threading.Event = field(default_factory=threading.Event, repr=False)

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


Responder = Callable[[ReceivedRequest], ScriptedResponse]


class LoopbackServer:
    """A background-thread HTTP server on ``127.0.0.1:<free port>``."""

    def __init__(self, responder: Responder | None = None) -> None:
        self._responder = responder
        self._queue: deque[ScriptedResponse] = deque()
        self._lock = threading.Lock()
        self._arrived = threading.Condition()
        self._connections: set[asyncio.Task[Any]] = set()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Future[None] | None = None
        self._startup_error: BaseException | None = None
        self._port = 0
        self.requests: list[ReceivedRequest] = []
        self.unscripted: list[ReceivedRequest] = []
        self.errors: list[str] = []

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:43121``."""
        return f"http://127.0.0.1:{self._port}"

    def script(self, *responses: ScriptedResponse) -> None:
        """Queue responses, served one per request in order."""
        with self._lock:
            self._queue.extend(responses)

    def start(self) -> LoopbackServer:
        """Start serving; returns once the port is bound."""
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name="loopback-http", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._startup_error is not None:
            raise RuntimeError("loopback server failed to start") from self._startup_error
        return self

    def stop(self) -> None:
        """Stop serving and close every connection."""
        loop, stopped, thread = self._loop, self._stopped, self._thread
        if loop is not None and stopped is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, stopped)
        if thread is not None:
            thread.join()
        self._thread = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> LoopbackServer:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        """Block until ``count`` requests arrived (``False`` on timeout)."""
        with self._arrived:
            return self._arrived.wait_for(lambda: len(self.requests) >= count, timeout)

    async def wait_for_disconnect(self, index: int = -1, *, within_s: float = 10.0) -> bool:
        """Wait until the client closed the connection that carried request ``index``."""
        return await asyncio.to_thread(self.requests[index].disconnected.wait, within_s)

    # -- server thread -------------------------------------------------------------------

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # surfaced to start() instead of dying silently
            self._startup_error = exc
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = self._loop.create_future()
        server = await asyncio.start_server(self._serve_connection, "127.0.0.1", 0, limit=1 << 20)
        self._port = server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stopped
        server.close()
        # Connections first: newer Pythons' wait_closed() waits for them to end.
        connections = list(self._connections)
        for task in connections:
            task.cancel()
        for task in connections:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await server.wait_closed()

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        served: list[ReceivedRequest] = []
        client_gone = False
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    client_gone = True
                    break
                served.append(request)
                with self._arrived:
                    self.requests.append(request)
                    self._arrived.notify_all()
                response = self._respond_to(request)
                outcome = await _write_response(reader, writer, response)
                if outcome != "open":
                    client_gone = outcome == "client_gone"
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            client_gone = True
        except asyncio.CancelledError:
            # Only stop() cancels a connection; ending quietly keeps asyncio's stream
            # callback from logging the cancellation as an error.
            pass
        except Exception as exc:  # a malformed request: drop the connection, keep serving
            self.errors.append(f"connection failed: {exc!r}")
        finally:
            if client_gone:
                for request in served:
                    request.disconnected.set()
            if not writer.transport.is_closing():
                writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            if task is not None:
                self._connections.discard(task)

    def _respond_to(self, request: ReceivedRequest) -> ScriptedResponse:
        try:
            if self._responder is not None:
                return self._responder(request)
            with self._lock:
                if self._queue:
                    return self._queue.popleft()
        except Exception as exc:  # a broken responder must not kill the server thread
            self.errors.append(f"responder failed: {exc!r}")
            return _json_response(500, {"error": {"message": "responder failed"}})
        self.unscripted.append(request)
        return _json_response(500, {"error": {"message": "no scripted response left"}})


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _json_response(status: int, payload: Any) -> ScriptedResponse:
    return ScriptedResponse(
        status=status,
        headers={"content-type": "application/json"},
        body=json.dumps(payload).encode(),
    )


async def _read_request(reader: asyncio.StreamReader) -> ReceivedRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(reader)
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0")))
    return ReceivedRequest(method=method, path=path, headers=headers, body=body)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return bytes(body)
        body += await reader.readexactly(size)
        await reader.readexactly(2)


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Overloaded" if status == 529 else "Status"


async def _write_response(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, response: ScriptedResponse
) -> Literal["open", "client_gone", "server_closed"]:
    headers = {key.lower(): value for key, value in response.headers.items()}
    fixed = isinstance(response.body, bytes | bytearray) and response.ending == "complete"
    if fixed:
        headers["content-length"] = str(len(response.body))  # type: ignore[arg-type]
    else:
        headers["transfer-encoding"] = "chunked"
    head = f"HTTP/1.1 {response.status} {_reason(response.status)}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
    try:
        writer.write(head.encode("latin-1"))
        if fixed:
            writer.write(response.body)  # type: ignore[arg-type]
        else:
            pieces = [response.body] if isinstance(response.body, bytes) else response.body
            for index, piece in enumerate(pieces):
                if index and response.piece_delay_s:
                    await asyncio.sleep(response.piece_delay_s)
                if piece:
                    writer.write(b"%x\r\n%b\r\n" % (len(piece), piece))
                    await writer.drain()
        if response.ending == "complete":
            if not fixed:
                writer.write(b"0\r\n\r\n")
            await writer.drain()
            return "open"
        await writer.drain()
    except ConnectionError:
        return "client_gone"
    if response.ending == "stall":
        # Say nothing more; the next thing to happen is the client hanging up.
        while await reader.read(65536):
            pass
        return "client_gone"
    if response.ending == "reset":
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
    return "server_closed"
