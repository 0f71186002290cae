"""A provider request's head goes out with its body in one socket write (llm/request_writes.py).

The writes are recorded under the coalescing layer, on httpcore's real network streams over
real loopback sockets: what reaches the socket, in how many ``send`` calls. The bytes must be
exactly those of an unwrapped client; only the number of writes changes.
"""

# httpcore's stream and backend interfaces take the timeouts as arguments.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

import httpcore
import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from relavium_lsp.llm import streaming_http
from relavium_lsp.llm.request_writes import (
    MAX_JOINED_BODY,
    CoalescingBackend,
    CoalescingStream,
    announces_body,
    coalesce_request_writes,
)
from tests.unit.llm.llm_helpers import anthropic, collect, openai, request, text_of
from tests.unit.llm.wire_servers import (
    LoopbackServer,
    ScriptedResponse,
    anthropic_stream,
    openai_stream,
)


class RecordingStream(httpcore.AsyncNetworkStream):
    """A real network stream whose writes are noted (what the socket is asked to send)."""

    def __init__(self, inner: httpcore.AsyncNetworkStream, backend: RecordingBackend) -> None:
        self._inner = inner
        self.writes = backend.writes
        self._backend = backend

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:  # httpcore's own streams skip empty writes without a syscall
            self.writes.append(bytes(buffer))
            self._backend.on_write()
        await self._inner.write(buffer, timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._backend.reading.set()
        return await self._inner.read(max_bytes, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        upgraded = await self._inner.start_tls(ssl_context, server_hostname, timeout)
        return RecordingStream(upgraded, self._backend)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class RecordingBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self.inner = inner
        self.writes: list[bytes] = []
        self.reading = asyncio.Event()  # a read reached the socket
        self.on_write: Callable[[], None] = lambda: None

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self.inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        return RecordingStream(stream, self)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise NotImplementedError

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def recorded(client: httpx.AsyncClient) -> RecordingBackend:
    """Put a recorder on the socket side of the client's default pool (before coalescing)."""
    pool: Any = client._transport._pool  # type: ignore[attr-defined]
    backend = RecordingBackend(pool._network_backend)
    pool._network_backend = backend
    return backend


@pytest.fixture
async def plain(
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[tuple[httpx.AsyncClient, RecordingBackend]]:
    """A client as httpx makes it: providers built in the test leave every client alone."""
    monkeypatch.setattr(streaming_http, "coalesce_request_writes", lambda client: 0)
    async with httpx.AsyncClient() as http:
        yield http, recorded(http)


@pytest.fixture
async def coalesced() -> AsyncIterator[tuple[httpx.AsyncClient, RecordingBackend]]:
    async with httpx.AsyncClient() as http:
        backend = recorded(http)
        assert coalesce_request_writes(http) == 1
        yield http, backend


async def test_a_streamed_provider_request_is_one_write_with_the_same_bytes(
    server: LoopbackServer,
    plain: tuple[httpx.AsyncClient, RecordingBackend],
    coalesced: tuple[httpx.AsyncClient, RecordingBackend],
) -> None:
    server.script(openai_stream(text=["Hel", "lo"]), openai_stream(text=["Hel", "lo"]))
    for http, _ in (plain, coalesced):
        chunks = await collect(openai(server, http).stream(request("same words")))
        assert text_of(chunks) == "Hello"
    head, body = plain[1].writes
    assert head.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert head.endswith(b"\r\n\r\n")
    assert body.startswith(b"{")
    assert coalesced[1].writes == [head + body]
    first, second = server.requests
    assert (first.body, first.headers) == (second.body, second.headers)


async def test_every_request_on_a_kept_alive_connection_is_one_write(
    server: LoopbackServer, coalesced: tuple[httpx.AsyncClient, RecordingBackend]
) -> None:
    http, backend = coalesced
    server.script(*(anthropic_stream(text=[f"n{n}"]) for n in range(3)))
    provider = anthropic(server, http)
    for n in range(3):
        assert text_of(await collect(provider.stream(request(f"turn {n}")))) == f"n{n}"
    assert len(backend.writes) == 3
    assert all(f"turn {n}".encode() in server.requests[n].body for n in range(3))


async def test_a_request_without_a_body_goes_out_at_once(
    server: LoopbackServer, coalesced: tuple[httpx.AsyncClient, RecordingBackend]
) -> None:
    http, backend = coalesced
    server.script(ScriptedResponse(headers={"content-type": "application/json"}, body=b"{}"))
    response = await http.get(f"{server.url}/v1/models")
    assert response.json() == {}
    (head,) = backend.writes
    assert head.startswith(b"GET /v1/models HTTP/1.1\r\n")


async def test_a_streamed_upload_is_written_as_it_comes(
    server: LoopbackServer, coalesced: tuple[httpx.AsyncClient, RecordingBackend]
) -> None:
    http, backend = coalesced

    async def pieces() -> AsyncIterator[bytes]:
        yield b"one "
        yield b"two"

    server.script(ScriptedResponse(body=b"ok"))
    response = await http.post(f"{server.url}/upload", content=pieces())
    assert response.text == "ok"
    assert server.requests[0].body == b"one two"
    # Chunked: the head is not held, nor any piece (each may be slow to come).
    assert backend.writes[0].endswith(b"\r\n\r\n")
    assert b"one " in backend.writes[1]
    assert len(backend.writes) == 4  # head, two pieces, the chunked end


async def test_the_wire_bytes_are_the_same_for_errors_timeouts_and_retries(
    server: LoopbackServer,
    plain: tuple[httpx.AsyncClient, RecordingBackend],
    coalesced: tuple[httpx.AsyncClient, RecordingBackend],
) -> None:
    outcomes: list[list[Any]] = []
    for http, _ in (plain, coalesced):
        server.script(
            ScriptedResponse(status=429, headers={"retry-after": "2"}, body=b'{"error":{}}'),
            ScriptedResponse(headers={"content-type": "text/event-stream"}, ending="stall"),
        )
        provider = openai(server, http, timeout_s=0.5)
        limited = (await collect(provider.stream(request("a"))))[-1]
        stalled = (await collect(provider.stream(request("b"))))[-1]
        outcomes.append([limited.error.kind, limited.error.retry_after_s, stalled.error.kind])  # type: ignore[union-attr]
        assert await server.wait_for_disconnect(-1)
    assert outcomes == [["rate_limit", 2.0, "timeout"]] * 2
    assert b"".join(plain[1].writes) == b"".join(coalesced[1].writes)
    assert (len(plain[1].writes), len(coalesced[1].writes)) == (4, 2)


async def test_a_truncated_answer_is_still_a_transport_error(
    server: LoopbackServer, coalesced: tuple[httpx.AsyncClient, RecordingBackend]
) -> None:
    http, _ = coalesced
    server.script(
        ScriptedResponse(
            headers={"content-type": "text/event-stream"},
            body=[b'data: {"choices":[{"index":0,"delta":{"content":"par"}}]}\n\n'],
            ending="close",
        )
    )
    last = (await collect(openai(server, http).stream(request())))[-1]
    assert last.error.kind == "transport"  # type: ignore[union-attr]


async def test_requests_through_a_forward_proxy_are_coalesced_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with LoopbackServer() as proxy:
        for name in ("https_proxy", "all_proxy", "no_proxy", "http_proxy"):
            monkeypatch.delenv(name, raising=False)
            monkeypatch.delenv(name.upper(), raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        async with httpx.AsyncClient() as http:
            assert coalesce_request_writes(http) == 2  # the default transport, the env proxy
            assert coalesce_request_writes(http) == 2  # idempotent
            mounted: Any = next(t for t in http._mounts.values() if t is not None)
            backend = RecordingBackend(mounted._pool._network_backend.inner)
            mounted._pool._network_backend = CoalescingBackend(backend)
            proxy.script(ScriptedResponse(body=b"proxied"))
            response = await http.post("http://provider.invalid/v1/x", content=b'{"a":1}')
        assert response.text == "proxied"
        assert proxy.requests[0].path == "http://provider.invalid/v1/x"
        assert proxy.requests[0].body == b'{"a":1}'
        assert len(backend.writes) == 1


async def test_a_client_without_httpx_pools_is_left_alone() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="mocked")

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        assert coalesce_request_writes(http) == 0
        assert (await http.post("http://x.invalid/", content=b"1")).text == "mocked"


# -- the stream's rules, against a loopback socket -----------------------------------------


HEAD = b"POST /v1/x HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n"


@pytest.mark.parametrize(
    ("buffer", "held"),
    [
        (HEAD, True),
        (HEAD.replace(b"Content-Length", b"content-LENGTH"), True),
        (HEAD.replace(b"Content-Length: 2", b"Content-Length: 0"), False),
        (HEAD.replace(b"Length: 2", b"Length: %d" % MAX_JOINED_BODY), True),
        (HEAD.replace(b"Length: 2", b"Length: %d" % (MAX_JOINED_BODY + 1)), False),
        (HEAD.replace(b"Length: 2", b"Length: x2"), False),
        (HEAD.replace(b"Content-Length: 2", b"Transfer-Encoding: chunked"), False),
        (HEAD.replace(b"HTTP/1.1", b"HTTP/1.0"), False),
        (HEAD[:-2], False),  # not a whole head
        (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", False),
        (b"CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n", False),
        (b"0\r\n\r\n", False),
        (b"", False),
    ],
)
def test_which_writes_are_held(buffer: bytes, held: bool) -> None:
    assert announces_body(buffer) is held


class _Echo:
    """A raw TCP server that notes every ``recv`` and answers ``ok`` once it has ``until``."""

    def __init__(self, until: bytes) -> None:
        self.until = until
        self.received: list[bytes] = []
        self.got = asyncio.Event()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = b""
        while not data.endswith(self.until):
            piece = await reader.read(65536)
            if not piece:
                break
            self.received.append(piece)
            data += piece
        self.got.set()
        try:
            writer.write(b"ok")
            await writer.drain()
        except ConnectionError:
            pass  # the client closed without reading
        writer.close()


async def _connected(
    until: bytes,
) -> tuple[_Echo, asyncio.Server, CoalescingStream, RecordingBackend]:
    echo = _Echo(until)
    server = await asyncio.start_server(echo.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    backend = RecordingBackend(httpcore.AnyIOBackend())
    stream = await CoalescingBackend(backend).connect_tcp("127.0.0.1", port)
    assert isinstance(stream, CoalescingStream)
    return echo, server, stream, backend


async def test_the_body_write_carries_the_held_head() -> None:
    echo, server, stream, backend = await _connected(HEAD + b"{}")
    await stream.write(HEAD)
    assert backend.writes == []
    await stream.write(b"{}")
    await stream.write(b"")  # h11's end of a Content-Length message
    assert backend.writes == [HEAD + b"{}"]
    assert await stream.read(10) == b"ok"
    assert b"".join(echo.received) == HEAD + b"{}"
    await stream.aclose()
    server.close()
    await server.wait_closed()


async def test_a_read_sends_a_held_head_first() -> None:
    echo, server, stream, backend = await _connected(HEAD)
    await stream.write(HEAD)
    assert await stream.read(10) == b"ok"
    assert backend.writes == [HEAD]
    assert b"".join(echo.received) == HEAD
    await stream.aclose()
    server.close()
    await server.wait_closed()


async def test_closing_drops_a_held_head() -> None:
    echo, server, stream, backend = await _connected(HEAD)
    await stream.write(HEAD)
    await stream.aclose()
    await echo.got.wait()
    assert backend.writes == []
    assert echo.received == []
    server.close()
    await server.wait_closed()


async def test_nothing_is_held_while_a_read_waits() -> None:
    _, server, stream, backend = await _connected(HEAD)
    reading = asyncio.create_task(stream.read(10))
    await backend.reading.wait()  # the read is parked on the socket
    await stream.write(HEAD)
    assert backend.writes == [HEAD]
    assert await reading == b"ok"
    await stream.aclose()
    server.close()
    await server.wait_closed()


# -- over TLS: the head joins its body inside the TLS stream httpcore upgrades to -----------


def _self_signed(tmp_path: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context for 127.0.0.1 and a client context that trusts only it."""
    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "relavium loopback")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(pem))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    client = ssl.create_default_context(cadata=cert.public_bytes(pem).decode())
    return server, client


async def test_over_tls_the_request_is_one_plaintext_write(tmp_path: Path) -> None:
    server_context, client_context = _self_signed(tmp_path)
    received: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        received.append(head + await reader.readexactly(length))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=server_context)
    port = server.sockets[0].getsockname()[1]
    async with server, httpx.AsyncClient(verify=client_context) as http:
        backend = recorded(http)
        assert coalesce_request_writes(http) == 1
        response = await http.post(f"https://127.0.0.1:{port}/v1/x", content=b'{"a":1}')
        assert response.text == "ok"
    (sent,) = backend.writes
    assert received == [sent]
    assert sent.endswith(b'\r\n\r\n{"a":1}')
