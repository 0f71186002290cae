"""Egress attacks (SSRF), decided without the network, plus a real loopback TLS round trip."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from relavium_lsp.errors import ToolDenied, ToolError
from relavium_lsp.tools.base import ToolLimits
from relavium_lsp.tools.netguard import EgressGuard, check_url, parse_allowlist
from relavium_lsp.tools.registry import default_registry

ALLOWED = ["api.example.com", "example.org:8443", "*.wild.example", "127.0.0.1"]

REFUSED_URLS = [
    "http://api.example.com/",
    "ftp://api.example.com/",
    "file:///etc/passwd",
    "gopher://api.example.com/",
    "ws://api.example.com/",
    "https://127.0.0.1/",
    "https://localhost/",
    "https://LOCALHOST./",
    "https://[::1]/",
    "https://0.0.0.0/",
    "https://169.254.169.254/latest/meta-data/",
    "https://2130706433/",
    "https://0x7f000001/",
    "https://0x7f.1/",
    "https://0177.0.0.1/",
    "https://017700000001/",
    "https://127.1/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::ffff:7f00:1]/",
    "https://[::ffff:169.254.169.254]/",
    "https://[fe80::1%25eth0]/",
    "https://[fd00:ec2::254]/",
    "https://10.0.0.1/",
    "https://100.64.0.1/",
    "https://192.168.1.1/",
    "https://api.example.com@127.0.0.1/",
    "https://user:pass@api.example.com/",
    "https://127.0.0.1#@api.example.com/",
    "https://api.example.com.evil.com/",
    "https://evil.api.example.com/",
    "https://example.com/",
    "https://api.example.com:8443/",
    "https://example.org/",
    "https://\u0430pi.example.com/",
    "https://api.example.com\\@evil.com/",
    "https://api.example.com%2f@evil.com/",
    "https:///etc/passwd",
    "https://api.example.com /",
    "https://api.example.com\r\nHost: evil/",
    "https://api.example.com:0/",
    "https://api.example.com:99999/",
    "https://sub.wild.example/",
    "https://127%2e0%2e0%2e1/",
]


@pytest.mark.parametrize("url", REFUSED_URLS)
def test_refused_urls_never_reach_dns(url: str) -> None:
    with pytest.raises(ToolDenied):
        check_url(url, ALLOWED)


def test_there_are_at_least_thirty_egress_attacks() -> None:
    assert len(REFUSED_URLS) + len(BLOCKED_ANSWERS) >= 30


@pytest.mark.parametrize(
    ("url", "authority"),
    [
        ("https://api.example.com/v1?x=1", "api.example.com"),
        ("https://API.Example.COM./v1", "api.example.com"),
        ("https://api.example.com:443/", "api.example.com"),
        ("https://example.org:8443/data", "example.org:8443"),
    ],
)
def test_allowed_urls_pass_the_decision(url: str, authority: str) -> None:
    assert check_url(url, ALLOWED).authority == authority


def test_allowlist_drops_wildcards_and_ip_entries() -> None:
    assert parse_allowlist(ALLOWED) == {("api.example.com", 443), ("example.org", 8443)}


def test_empty_allowlist_disables_the_tool() -> None:
    with pytest.raises(ToolError) as raised:
        check_url("https://api.example.com/", [])
    assert raised.value.code == "tool_unavailable"


@dataclass
class TableResolver:
    """A resolver answering from a table, counting lookups (a real class, not a mock)."""

    table: dict[str, list[list[str]]]
    lookups: list[str] = field(default_factory=list)

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.lookups.append(host)
        answers = self.table[host]
        return answers[0] if len(answers) == 1 else answers.pop(0)


BLOCKED_ANSWERS = [
    ["10.0.0.5"],
    ["93.184.216.34", "127.0.0.1"],
    ["::1"],
    ["::ffff:169.254.169.254"],
    ["100.100.100.200"],
    ["169.254.170.2"],
    ["fe80::1%eth0"],
    ["fc00::7"],
    ["0.0.0.0"],
    ["224.0.0.1"],
    ["2002:7f00:1::"],
    ["64:ff9b::a00:1"],
    ["192.0.0.8"],
]


@pytest.mark.parametrize("answers", BLOCKED_ANSWERS)
async def test_a_name_resolving_to_a_blocked_address_is_refused(answers: list[str]) -> None:
    guard = EgressGuard(resolver=TableResolver({"api.example.com": [answers]}))
    with pytest.raises(ToolDenied, match="resolves to"):
        await guard.authorize("https://api.example.com/", ALLOWED)


async def test_a_public_answer_is_pinned() -> None:
    resolver = TableResolver({"api.example.com": [["93.184.216.34", "2606:2800::1"]]})
    target = await EgressGuard(resolver=resolver).authorize(
        "https://api.example.com/a?b=1", ALLOWED
    )
    assert str(target.address) == "93.184.216.34"
    assert str(target.pinned_url()) == "https://93.184.216.34/a?b=1"
    assert resolver.lookups == ["api.example.com"]


async def test_real_dns_for_localhost_is_refused() -> None:
    with pytest.raises(ToolDenied, match="loopback"):
        await EgressGuard().authorize("https://localhost/", ["localhost"])


# --- a loopback HTTPS server with a certificate made for this test only -----------------


@dataclass
class TlsServer:
    port: int
    ca_pem: bytes
    sni: list[str | None] = field(default_factory=list)
    requests: list[tuple[str, str, dict[str, str], bytes]] = field(default_factory=list)


def _make_certificates(names: list[str]) -> tuple[bytes, bytes, bytes]:
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "relavium test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf_cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_name)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName(name) for name in names]), critical=False
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.OID_SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = leaf_key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return ca_cert.public_bytes(pem), leaf_cert.public_bytes(pem), key_pem


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return method, target, headers, body


@pytest.fixture
async def tls_server(tmp_path) -> AsyncIterator[TlsServer]:
    ca_pem, cert_pem, key_pem = _make_certificates(["api.example.test", "internal.example.test"])
    (tmp_path / "cert.pem").write_bytes(cert_pem)
    (tmp_path / "key.pem").write_bytes(key_pem)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    state = TlsServer(port=0, ca_pem=ca_pem)

    def remember_sni(sock: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
        state.sni.append(name)

    context.sni_callback = remember_sni  # type: ignore[assignment]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            method, target, headers, body = await _read_request(reader)
            state.requests.append((method, target, headers, body))
            status, extra, payload = _route(target, state.port, method, body)
            response = (
                f"HTTP/1.1 {status}\r\nContent-Length: {len(payload)}\r\n"
                f"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n{extra}\r\n"
            ).encode() + payload
            writer.write(response)
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, ssl.SSLError):
                await writer.wait_closed()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)
    state.port = server.sockets[0].getsockname()[1]
    async with server:
        yield state
        server.close()


def _route(target: str, port: int, method: str, body: bytes) -> tuple[str, str, bytes]:
    base = f"https://api.example.test:{port}"
    if target == "/hello":
        return "200 OK", "", f"hello {method} {body.decode()}".encode()
    if target == "/to-hello":
        return "302 Found", f"Location: {base}/hello\r\n", b""
    if target == "/to-internal":
        return "302 Found", f"Location: https://internal.example.test:{port}/hello\r\n", b""
    if target == "/to-http":
        return "301 Moved", f"Location: http://api.example.test:{port}/hello\r\n", b""
    if target == "/to-metadata":
        return "307 Temporary", "Location: https://169.254.169.254/latest/\r\n", b""
    if target == "/loop":
        return "302 Found", f"Location: {base}/loop\r\n", b""
    if target == "/big":
        return "200 OK", "", b"z" * 3_000_000
    return "404 Not Found", "", b"missing"


def _guard(server: TlsServer, *, trust: bool = True, public: bool = True, table=None):
    resolver = TableResolver(
        table or {"api.example.test": [["127.0.0.1"]], "internal.example.test": [["10.0.0.7"]]}
    )
    context = ssl.create_default_context(cadata=server.ca_pem.decode()) if trust else None
    guard = EgressGuard(
        resolver=resolver,
        ssl_context=context,
        treat_as_public=[ipaddress.ip_address("127.0.0.1")] if public else [],
    )
    return guard, resolver


def _ctx(harness, server: TlsServer, **policy):
    domains = [f"api.example.test:{server.port}", f"internal.example.test:{server.port}"]
    return harness.context(allowed_domains=domains, approval="never_ask", **policy)


async def test_allowed_https_request_goes_through_pinned(harness, tls_server) -> None:
    guard, resolver = _guard(tls_server)
    harness.registry = default_registry(egress_guard=guard)
    outcome = await harness.call(
        "http_request",
        {
            "url": f"https://api.example.test:{tls_server.port}/hello",
            "method": "POST",
            "body": "ping",
            "headers": {"X-Trace": "1"},
        },
        _ctx(harness, tls_server),
    )
    assert not outcome.is_error, outcome.result
    assert outcome.result.startswith("HTTP 200 OK")
    assert outcome.result.endswith("hello POST ping")
    method, target, headers, body = tls_server.requests[0]
    assert (method, target, body) == ("POST", "/hello", b"ping")
    assert headers["host"] == f"api.example.test:{tls_server.port}"
    assert headers["x-trace"] == "1" and headers["accept-encoding"] == "identity"
    assert tls_server.sni == ["api.example.test"]
    assert resolver.lookups == ["api.example.test"]


async def test_rebinding_answer_is_never_used(harness, tls_server) -> None:
    # The second answer would be private; the connection must use the first, checked one.
    guard, resolver = _guard(tls_server, table={"api.example.test": [["127.0.0.1"], ["10.0.0.9"]]})
    harness.registry = default_registry(egress_guard=guard)
    url = f"https://api.example.test:{tls_server.port}/hello"
    outcome = await harness.call("http_request", {"url": url}, _ctx(harness, tls_server))
    assert not outcome.is_error, outcome.result
    assert resolver.lookups == ["api.example.test"]


async def test_same_host_redirect_is_followed_and_rechecked(harness, tls_server) -> None:
    guard, resolver = _guard(tls_server)
    harness.registry = default_registry(egress_guard=guard)
    url = f"https://api.example.test:{tls_server.port}/to-hello"
    outcome = await harness.call("http_request", {"url": url}, _ctx(harness, tls_server))
    assert outcome.result.startswith("HTTP 200 OK") and "hello GET" in outcome.result
    assert "redirected from" in outcome.result
    assert resolver.lookups == ["api.example.test", "api.example.test"]


@pytest.mark.parametrize("path", ["/to-internal", "/to-http", "/to-metadata"])
async def test_redirects_to_refused_destinations_are_denied(harness, tls_server, path) -> None:
    guard, _ = _guard(tls_server)
    harness.registry = default_registry(egress_guard=guard)
    url = f"https://api.example.test:{tls_server.port}{path}"
    outcome = await harness.call("http_request", {"url": url}, _ctx(harness, tls_server))
    assert outcome.error_code == "tool_denied", outcome.result
    assert "redirect" in outcome.result
    assert [request[1] for request in tls_server.requests] == [path]


async def test_redirect_loops_stop(harness, tls_server) -> None:
    guard, _ = _guard(tls_server)
    harness.registry = default_registry(egress_guard=guard)
    url = f"https://api.example.test:{tls_server.port}/loop"
    outcome = await harness.call("http_request", {"url": url}, _ctx(harness, tls_server))
    assert outcome.error_code == "tool_failed" and "more than 5 redirects" in outcome.result
    assert len(tls_server.requests) == 6


async def test_response_size_is_bounded(harness, tls_server) -> None:
    guard, _ = _guard(tls_server)
    harness.registry = default_registry(
        egress_guard=guard, limits=ToolLimits(http_max_response_bytes=100_000)
    )
    url = f"https://api.example.test:{tls_server.port}/big"
    outcome = await harness.call("http_request", {"url": url}, _ctx(harness, tls_server))
    assert "body cut at 100,000 bytes" in outcome.result
    [(_, artifact)] = harness.artifacts.saved.items()
    assert artifact.count("z") == 100_000


async def test_loopback_is_refused_without_the_test_override(harness, tls_server) -> None:
    guard, _ = _guard(tls_server, public=False)
    harness.registry = default_registry(egress_guard=guard)
    url = f"https://api.example.test:{tls_server.port}/hello"
    outcome = await harness.call("http_request", {"url": url}, _ctx(harness, tls_server))
    assert outcome.error_code == "tool_denied" and "loopback" in outcome.result
    assert tls_server.requests == []


async def test_the_test_certificate_is_not_trusted_by_default(harness, tls_server) -> None:
    guard, _ = _guard(tls_server, trust=False)
    harness.registry = default_registry(egress_guard=guard)
    url = f"https://api.example.test:{tls_server.port}/hello"
    outcome = await harness.call("http_request", {"url": url}, _ctx(harness, tls_server))
    assert outcome.error_code == "tool_failed"
    assert "ConnectError" in outcome.result
    assert tls_server.requests == []


async def test_egress_asks_in_ask_mode_with_the_host_only(harness, tls_server, make_host) -> None:
    guard, _ = _guard(tls_server)
    harness.registry = default_registry(egress_guard=guard)
    host = make_host(approvals=["reject"])
    ctx = _ctx(harness, tls_server, host=host)
    ctx.policy = ctx.policy.model_copy(update={"approval": "ask"})
    url = f"https://api.example.test:{tls_server.port}/hello"
    outcome = await harness.call(
        "http_request", {"url": url, "method": "POST", "body": "private body"}, ctx
    )
    assert outcome.error_code == "tool_denied"
    assert host.requests[0].preview.to_wire() == {"host": f"api.example.test:{tls_server.port}"}
    assert tls_server.requests == []


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil"},
        {"Transfer-Encoding": "chunked"},
        {"X-A": "v\r\nInjected: 1"},
        {"Bad Name": "x"},
    ],
)
async def test_hostile_headers_are_refused(harness, tls_server, headers) -> None:
    guard, _ = _guard(tls_server)
    harness.registry = default_registry(egress_guard=guard)
    url = f"https://api.example.test:{tls_server.port}/hello"
    outcome = await harness.call(
        "http_request", {"url": url, "headers": headers}, _ctx(harness, tls_server)
    )
    assert outcome.error_code == "tool_denied"
    assert tls_server.requests == []
