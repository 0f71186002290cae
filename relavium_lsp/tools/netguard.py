"""The SSRF guard for ``http_request`` and MCP over HTTP: which URLs, at which address.

Decision (:func:`check_url`, pure — no network):

- the URL must parse, hold no whitespace, control characters or backslashes, use ``https``
  and carry no user-info (``https://allowed@evil`` is refused, not interpreted);
- the host must not be an IP literal in any spelling — dotted, IPv6, or the legacy forms
  ``inet_aton`` still accepts (``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1``);
- the host, lower-cased, IDNA-encoded and with one trailing dot removed, must equal an entry
  of ``allowed_domains`` exactly. No wildcards: ``*.example.com`` entries are ignored and
  ``api.example.com`` does not allow ``example.com`` or ``evil.api.example.com``.
  An entry ``host`` allows port 443 only; ``host:port`` allows exactly that port.

Resolution (:meth:`EgressGuard.authorize`): the guard resolves the name itself; if ANY
resolved address is blocked (:func:`relavium_lsp.netaddr.blocked_reason` — private,
loopback, link-local, CGNAT, multicast, unspecified, metadata, reserved, mapped forms) the
request is refused. The returned :class:`EgressTarget` pins the first checked address; the
HTTP layer connects to that address only, so a second DNS answer can never be used.

Configured endpoints (:meth:`EgressGuard.authorize_endpoint`, MCP servers over HTTP) pass the
same checks without the allowlist: an IP literal is checked as an address, and non-public
addresses and plain ``http://`` need the entry's ``allow_local_endpoint``; the connection is
pinned to the checked address all the same.

Test hooks are explicit and constructor-only: a resolver, an SSL context and a set of
addresses to treat as public. Production builds ``EgressGuard()`` and nothing reads an
environment variable to loosen it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import string
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass

import httpx

from relavium_lsp.errors import ToolDenied, ToolError
from relavium_lsp.netaddr import IPAddress, blocked_reason

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
DEFAULT_PORT = 443
MAX_URL_CHARS = 8192
_FORBIDDEN_URL_CHARACTERS = frozenset(string.whitespace) | {"\\"}


@dataclass(frozen=True)
class CheckedUrl:
    """A URL that passed :func:`check_url` (not yet resolved)."""

    url: httpx.URL
    host: str  # normalised ASCII host (IDNA), no trailing dot
    port: int

    @property
    def authority(self) -> str:
        """``host``, or ``host:port`` when the port is not the scheme's: the Host header."""
        default = DEFAULT_PORT if self.url.scheme == "https" else 80
        return self.host if self.port == default else f"{self.host}:{self.port}"

    @property
    def sni_hostname(self) -> str | None:
        """The name TLS verifies (None for an IP address, which has no name to send)."""
        return None if _looks_like_ip(self.host) else self.host


@dataclass(frozen=True)
class EgressTarget:
    """A checked URL plus the one address the connection is pinned to."""

    checked: CheckedUrl
    address: IPAddress

    def pinned_url(self) -> httpx.URL:
        """The request URL with the host replaced by the checked address."""
        host = str(self.address)
        return self.checked.url.copy_with(host=host, port=self.checked.port)


def normalize_host(host: str) -> str:
    """Lower-case, IDNA-encode and drop one trailing dot, for comparison."""
    lowered = host.strip().lower()
    if lowered.endswith("."):
        lowered = lowered[:-1]
    try:
        return lowered.encode("idna").decode("ascii")
    except UnicodeError:
        return lowered


def parse_allowlist(entries: Iterable[str]) -> frozenset[tuple[str, int]]:
    """``allowed_domains`` as ``(host, port)`` pairs; wildcard and IP entries are dropped."""
    allowed: set[tuple[str, int]] = set()
    for entry in entries:
        text = entry.strip()
        host, port = text, DEFAULT_PORT
        if text.count(":") == 1:
            host, _, port_text = text.partition(":")
            if not port_text.isdigit() or not 0 < int(port_text) < 65536:
                continue
            port = int(port_text)
        if not host or "*" in host or _looks_like_ip(host):
            continue
        allowed.add((normalize_host(host), port))
    return frozenset(allowed)


def _looks_like_ip(host: str) -> bool:
    candidate = host.strip("[]")
    try:
        ipaddress.ip_address(candidate.split("%", 1)[0])
        return True
    except ValueError:
        pass
    try:
        # inet_aton accepts the legacy spellings (decimal, octal, hex, short forms).
        socket.inet_aton(candidate.rstrip("."))
        return True
    except OSError:
        pass
    labels = candidate.rstrip(".").split(".")
    return all(label and _numeric_label(label) for label in labels)


def _numeric_label(label: str) -> bool:
    lowered = label.lower()
    if lowered.startswith("0x"):
        return all(ch in string.hexdigits for ch in lowered[2:])
    return lowered.isdigit()


def check_url(raw_url: str, allowed_domains: Iterable[str]) -> CheckedUrl:
    """Decide whether ``raw_url`` may be requested at all; raise :class:`ToolDenied` if not."""
    allowlist = parse_allowlist(allowed_domains)
    if not allowlist:
        raise ToolError(
            "http_request is disabled: [chat].allowed_domains is empty", code="tool_unavailable"
        )
    url, raw_host = _parse(raw_url, schemes=("https",))
    if _looks_like_ip(raw_host):
        raise ToolDenied(
            f"{raw_host!r} is an IP address; only domain names from allowed_domains are allowed"
        )
    host = normalize_host(raw_host)
    port = DEFAULT_PORT if url.port is None else url.port
    if not 0 < port < 65536:
        raise ToolDenied(f"port {port} is not a valid TCP port")
    if (host, port) not in allowlist:
        where = host if port == DEFAULT_PORT else f"{host}:{port}"
        raise ToolDenied(f"{where!r} is not in allowed_domains (exact names only)")
    return CheckedUrl(url=url, host=host, port=port)


def _parse(raw_url: str, *, schemes: tuple[str, ...]) -> tuple[httpx.URL, str]:
    """The URL and its raw host, refusing what could be read two ways (module doc)."""
    if len(raw_url) > MAX_URL_CHARS:
        raise ToolDenied(f"the URL is longer than {MAX_URL_CHARS} characters")
    bad = next(
        (ch for ch in raw_url if ch in _FORBIDDEN_URL_CHARACTERS or ord(ch) < 32 or ch == "\x7f"),
        None,
    )
    if bad is not None:
        raise ToolDenied(f"the URL contains a forbidden character (U+{ord(bad):04X})")
    try:
        url = httpx.URL(raw_url)
    except (httpx.InvalidURL, ValueError, UnicodeError) as error:
        raise ToolDenied(f"the URL could not be parsed safely ({error})") from None
    if url.scheme not in schemes:
        allowed = " or ".join(f"{scheme}://" for scheme in schemes)
        raise ToolDenied(f"only {allowed} URLs are allowed, not {url.scheme or 'no'} scheme")
    if url.userinfo:
        raise ToolDenied("URLs with user-info (user@host) are not allowed")
    raw_host = url.raw_host.decode("ascii", errors="replace")
    if not raw_host:
        raise ToolDenied("the URL has no host")
    return url, raw_host


def check_endpoint_url(raw_url: str, *, allow_local: bool) -> CheckedUrl:
    """A configured endpoint (an MCP server's ``url``): :func:`check_url` without an allowlist.

    The user (or a project the user trusted) named it, so an IP address is fine here — it is
    checked like a resolved one. Plain ``http://`` only with the entry's
    ``allow_local_endpoint`` opt-in, as for providers.
    """
    url, raw_host = _parse(raw_url, schemes=("https", "http") if allow_local else ("https",))
    host = normalize_host(raw_host)
    port = url.port if url.port is not None else (DEFAULT_PORT if url.scheme == "https" else 80)
    return CheckedUrl(url=url, host=host, port=port)


async def system_resolver(host: str, port: int) -> Sequence[str]:
    """Resolve with the event loop's ``getaddrinfo`` (TCP, any family)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _parse_address(text: str) -> IPAddress:
    return ipaddress.ip_address(text.split("%", 1)[0])


class EgressGuard:
    """Resolves, checks and pins egress destinations (see the module doc)."""

    def __init__(
        self,
        *,
        resolver: Resolver | None = None,
        ssl_context: ssl.SSLContext | None = None,
        treat_as_public: Iterable[IPAddress] = (),
    ) -> None:
        self._resolver = resolver or system_resolver
        self._ssl_context = ssl_context
        self._treat_as_public = frozenset(treat_as_public)

    @property
    def ssl_context(self) -> ssl.SSLContext:
        """The TLS trust used for egress (the system store unless a test injected one)."""
        if self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
        return self._ssl_context

    def address_refusal(self, address: IPAddress) -> str | None:
        """Why ``address`` may not be reached, or ``None``."""
        if address in self._treat_as_public:
            return None
        return blocked_reason(address)

    async def authorize(self, raw_url: str, allowed_domains: Iterable[str]) -> EgressTarget:
        """Check the URL, resolve its host, refuse if any address is blocked, pin one."""
        return await self._pin(check_url(raw_url, allowed_domains), check_addresses=True)

    async def authorize_endpoint(self, raw_url: str, *, allow_local: bool) -> EgressTarget:
        """A configured endpoint (an MCP server over HTTP, issue 35), checked and pinned.

        The same guard as ``http_request`` but for the allowlist: resolved here, refused when
        any address is private, loopback, link-local or metadata unless the entry sets
        ``allow_local_endpoint``, and pinned to the checked address either way.
        """
        checked = check_endpoint_url(raw_url, allow_local=allow_local)
        return await self._pin(checked, check_addresses=not allow_local)

    async def _pin(self, checked: CheckedUrl, *, check_addresses: bool) -> EgressTarget:
        if _looks_like_ip(checked.host):
            literal = checked.host.strip("[]")
            try:
                address = _parse_address(literal)
            except ValueError:  # a legacy spelling (0x7f.1): refused, never interpreted
                raise ToolDenied(f"{checked.host!r} is not a plain IP address") from None
            reason = self.address_refusal(address) if check_addresses else None
            if reason is not None:
                raise ToolDenied(f"{checked.host!r} is {reason}")
            return EgressTarget(checked=checked, address=address)
        try:
            answers = await self._resolver(checked.host, checked.port)
        except (OSError, UnicodeError) as error:
            raise ToolError(f"could not resolve {checked.host!r} ({error})") from None
        addresses: list[IPAddress] = []
        for answer in answers:
            try:
                addresses.append(_parse_address(answer))
            except ValueError:
                raise ToolDenied(f"{checked.host!r} resolved to an unusable address") from None
        if not addresses:
            raise ToolError(f"{checked.host!r} did not resolve to any address")
        for address in addresses if check_addresses else ():
            reason = self.address_refusal(address)
            if reason is not None:
                raise ToolDenied(f"{checked.host!r} resolves to {address}, {reason}")
        return EgressTarget(checked=checked, address=addresses[0])
