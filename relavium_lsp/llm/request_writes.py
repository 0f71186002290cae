"""One socket write per provider request: the request head waits for its body.

httpcore writes an HTTP/1.1 request in separate socket writes: the head (request line and
headers), then the body, then h11's end of message (empty for a ``Content-Length`` body).
Each write is an ``await`` that hands the event loop to whatever else is ready, and each is
its own TCP segment (asyncio sets ``TCP_NODELAY``), so the provider may wake up for the head
alone and again for the body. On a shared 2-vCPU machine every wake-up costs 0.1-3 ms
(issue 25, the per-turn overhead: sendMessage → the provider has read the request), and a
provider request's body is always bytes in memory that follow the head at once.

:class:`CoalescingStream` wraps httpcore's network stream: a write that is an HTTP/1.1
request head announcing a non-empty ``Content-Length`` body (up to 256 KiB) is held, and
goes out with the next write (the body) as one. Bytes are never held past the connection's
next operation: any other write, a read, a TLS upgrade sends them first; closing drops them
(the request was abandoned; the peer sees the connection close either way). Every other
write (a head without a body, chunked uploads, a proxy's ``CONNECT``, TLS records, HTTP/2
frames) passes straight through, as does everything while a read is in progress (HTTP/2
reads and writes one connection from several tasks; a write held then could wait for a
read that waits for it). The bytes on the wire are exactly httpcore's; only how many
``send`` calls carry them changes.

httpx builds its connection pools itself and offers no public way to give them a network
backend, so :func:`coalesce_request_writes` wraps the backend of the pools an existing
:class:`httpx.AsyncClient` already has (its default transport and proxy mounts, so proxies
and TLS stay as httpx set them up). If httpx's internals ever look different it changes
nothing and the client works as before, one write per piece.
"""

# httpcore's stream and backend interfaces take the timeouts as arguments.
# ruff: noqa: ASYNC109

from __future__ import annotations

import logging
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

logger = logging.getLogger(__name__)

_HEAD_END = b"\r\n\r\n"
_CONTENT_LENGTH = b"\r\ncontent-length:"
# A larger body does not reach the provider in one read anyway (socket buffers), and joining
# it to the head would copy it once more for nothing.
MAX_JOINED_BODY = 256 * 1024


def announces_body(buffer: bytes) -> bool:
    """Whether ``buffer`` is a whole HTTP/1.1 request head announcing a body worth joining.

    That is a non-empty ``Content-Length`` body of at most :data:`MAX_JOINED_BODY` bytes.
    """
    if not buffer.endswith(_HEAD_END):
        return False
    line_end = buffer.find(b"\r\n")
    if not buffer[:line_end].endswith(b" HTTP/1.1"):
        return False
    lowered = buffer.lower()
    at = lowered.find(_CONTENT_LENGTH)
    if at < 0:
        return False
    start = at + len(_CONTENT_LENGTH)
    value = lowered[start : lowered.find(b"\r\n", start)].strip()
    return value.isdigit() and 0 < int(value) <= MAX_JOINED_BODY


class CoalescingStream(httpcore.AsyncNetworkStream):
    """A network stream that sends a request head together with its body (module docstring)."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._head: bytes | None = None
        self._reading = False

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Write ``buffer``, after a held head; or hold it if it is a head with a body."""
        head = self._head
        if head is not None:
            self._head = None
            await self._inner.write(head + buffer, timeout)
        elif not self._reading and announces_body(buffer):
            self._head = buffer
        else:
            await self._inner.write(buffer, timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Send a held head first: whatever is read may be the answer to it."""
        head = self._head
        if head is not None:
            self._head = None
            await self._inner.write(head, timeout)
        self._reading = True
        try:
            return await self._inner.read(max_bytes, timeout)
        finally:
            self._reading = False

    async def aclose(self) -> None:
        """Close; a held head is dropped with its abandoned request."""
        self._head = None
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Upgrade to TLS (after sending a held head), coalescing on the TLS stream too."""
        head = self._head
        if head is not None:
            self._head = None
            await self._inner.write(head, timeout)
        upgraded = await self._inner.start_tls(ssl_context, server_hostname, timeout)
        return CoalescingStream(upgraded)

    def get_extra_info(self, info: str) -> Any:
        """The wrapped stream's (socket, addresses, TLS object, readability)."""
        return self._inner.get_extra_info(info)


class CoalescingBackend(httpcore.AsyncNetworkBackend):
    """A network backend whose streams are :class:`CoalescingStream` over another's."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self.inner = inner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Connect with the wrapped backend."""
        stream = await self.inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        return CoalescingStream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Connect with the wrapped backend."""
        stream = await self.inner.connect_unix_socket(
            path, timeout=timeout, socket_options=socket_options
        )
        return CoalescingStream(stream)

    async def sleep(self, seconds: float) -> None:
        """The wrapped backend's sleep (connection retries)."""
        await self.inner.sleep(seconds)


def coalesce_request_writes(client: httpx.AsyncClient) -> int:
    """Make ``client``'s new connections send each request head with its body; idempotent.

    Returns how many connection pools now coalesce (0 when the client's transports are not
    httpx's own, e.g. a test's ``MockTransport``). Connections already open keep their stream.
    """
    transports: list[Any] = [client._transport, *client._mounts.values()]
    coalescing = 0
    for transport in transports:
        if not isinstance(transport, httpx.AsyncHTTPTransport):
            continue
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if isinstance(backend, CoalescingBackend):
            coalescing += 1
        elif isinstance(pool, httpcore.AsyncConnectionPool) and isinstance(
            backend, httpcore.AsyncNetworkBackend
        ):
            pool._network_backend = CoalescingBackend(backend)
            coalescing += 1
        else:
            logger.debug("httpx transport without a known pool: request writes not coalesced")
    return coalescing
