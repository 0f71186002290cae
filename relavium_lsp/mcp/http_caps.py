"""An MCP server's HTTP answers, capped while they are read (issue 35).

Streamable HTTP answers a call in the POST's response (JSON or an event stream). The SDK
reads it whole; a 50 MB result took a minute and hundreds of megabytes before our caps saw
it. :class:`CappedResponses` wraps the transport of the client we hand the SDK: a POST's
body stops being read past the cap with a transport error, so the call fails and the next
use reconnects. The long-lived GET stream of notifications is left alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import TracebackType

import httpx2


class CappedResponses(httpx2.AsyncBaseTransport):
    """``inner``, with every POST response body limited to ``limit`` bytes."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """The inner transport's response, its body capped for a POST."""
        response = await self._inner.handle_async_request(request)
        if request.method != "POST":
            return response
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=CappedStream(response.stream, self._limit),
            extensions=response.extensions,
        )

    async def __aenter__(self) -> CappedResponses:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self._inner.__aexit__(exc_type, exc_value, traceback)

    async def aclose(self) -> None:
        """Close the inner transport."""
        await self._inner.aclose()


class CappedStream(httpx2.AsyncByteStream):
    """A response body that fails once more than ``limit`` bytes came."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        received = 0
        async for chunk in self._inner:
            received += len(chunk)
            if received > self._limit:
                raise httpx2.ReadError(
                    f"the server's answer was larger than {self._limit:,} bytes; left out"
                )
            yield chunk

    async def aclose(self) -> None:
        """Close the inner body."""
        await self._inner.aclose()
