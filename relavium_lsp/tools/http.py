"""``http_request``: HTTPS to allow-listed hosts only, pinned to the checked address.

Every hop (the first request and each redirect, at most ``http_max_redirects``) goes through
:meth:`~relavium_lsp.tools.netguard.EgressGuard.authorize`. The connection is made to the
checked IP literal while TLS SNI, certificate verification and the ``Host`` header use the
name, so DNS is consulted exactly once per hop and a rebinding answer is never used.
Responses are read up to ``http_max_response_bytes``; proxies and environment settings are
ignored (``trust_env=False``); compression is declined so the size cap is the real size.
Approval is asked once, for the first host; redirects stay within ``allowed_domains``.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Literal

import httpx
from pydantic import Field

from relavium_lsp.contracts.events import ApprovalPreview
from relavium_lsp.errors import ToolDenied, ToolError
from relavium_lsp.tools.base import (
    ApprovalNeed,
    PreparedCall,
    ToolArgs,
    ToolCallContext,
    ToolDefinition,
    ToolLimits,
    ToolRun,
)
from relavium_lsp.tools.netguard import EgressGuard, EgressTarget

HttpMethod = Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
# Framing, routing and proxy headers are the client's business, not the model's.
_FORBIDDEN_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "upgrade",
        "te",
        "trailer",
        "expect",
        "accept-encoding",
        "proxy-authorization",
        "proxy-connection",
        "forwarded",
        "x-forwarded-for",
        "x-forwarded-host",
    }
)
_CREDENTIAL_HEADERS = frozenset({"authorization", "cookie"})
_SHOWN_RESPONSE_HEADERS = (
    "content-type",
    "content-length",
    "location",
    "retry-after",
    "etag",
    "last-modified",
)
_TEXTUAL = ("text/", "json", "xml", "javascript", "yaml", "x-www-form-urlencoded", "csv")


class HttpRequestArgs(ToolArgs):
    """Arguments of ``http_request``."""

    url: str = Field(
        min_length=1, max_length=8192, description="An https:// URL on an allowed domain."
    )
    method: HttpMethod = "GET"
    headers: dict[str, str] | None = Field(
        default=None, max_length=50, description="Extra request headers."
    )
    body: str | None = Field(default=None, max_length=1_000_000, description="Request body.")


@dataclass(frozen=True)
class _Response:
    status: int
    reason: str
    headers: httpx.Headers
    body: bytes
    truncated: bool


def _checked_headers(headers: dict[str, str] | None) -> dict[str, str]:
    cleaned: dict[str, str] = {}
    for name, value in (headers or {}).items():
        if not _HEADER_NAME.match(name):
            raise ToolDenied(f"{name[:64]!r} is not a valid header name")
        if name.lower() in _FORBIDDEN_HEADERS:
            raise ToolDenied(f"the {name} header is set by the client and cannot be overridden")
        if len(value) > 8192 or any(ch in value for ch in "\r\n\0"):
            raise ToolDenied(f"the value of the {name} header is too long or holds line breaks")
        cleaned[name] = value
    return cleaned


async def _send_once(
    guard: EgressGuard,
    target: EgressTarget,
    method: str,
    headers: dict[str, str],
    body: str | None,
    limits: ToolLimits,
) -> _Response:
    """One request to the pinned address; the body is read up to the byte cap."""
    request_headers = {
        **headers,
        "Host": target.checked.authority,
        "Accept-Encoding": "identity",
    }
    async with httpx.AsyncClient(
        verify=guard.ssl_context,
        trust_env=False,
        follow_redirects=False,
        timeout=httpx.Timeout(limits.http_timeout_s),
        limits=httpx.Limits(max_keepalive_connections=0),
    ) as client:
        request = client.build_request(
            method,
            target.pinned_url(),
            headers=request_headers,
            content=body.encode("utf-8") if body is not None else None,
            extensions={"sni_hostname": target.checked.host},
        )
        response = await client.send(request, stream=True)
        try:
            collected = bytearray()
            truncated = False
            async for chunk in response.aiter_bytes():
                room = limits.http_max_response_bytes - len(collected)
                collected += chunk[: max(room, 0)]
                if len(chunk) > room:
                    truncated = True
                    break
        finally:
            await response.aclose()
    return _Response(
        status=response.status_code,
        reason=response.reason_phrase,
        headers=response.headers,
        body=bytes(collected),
        truncated=truncated,
    )


def _render(response: _Response, final_url: str, hops: list[str]) -> str:
    lines = [f"HTTP {response.status} {response.reason}".rstrip(), f"url: {final_url}"]
    if hops:
        lines.append("redirected from: " + " -> ".join(hops))
    for name in _SHOWN_RESPONSE_HEADERS:
        if name in response.headers:
            lines.append(f"{name}: {response.headers[name]}")
    lines.append("")
    content_type = response.headers.get("content-type", "").lower()
    textual = not content_type or any(marker in content_type for marker in _TEXTUAL)
    if response.body and (not textual or b"\0" in response.body[:8192]):
        lines.append(f"[binary body: {len(response.body):,} bytes of {content_type or 'data'}]")
    else:
        charset = httpx.Response(200, headers=response.headers).charset_encoding or "utf-8"
        try:
            lines.append(response.body.decode(charset, errors="replace"))
        except LookupError:
            lines.append(response.body.decode("utf-8", errors="replace"))
    if response.truncated:
        lines.append(f"[... body cut at {len(response.body):,} bytes ...]")
    return "\n".join(lines)


async def _fetch(
    guard: EgressGuard,
    first: EgressTarget,
    args: HttpRequestArgs,
    ctx: ToolCallContext,
    limits: ToolLimits,
) -> ToolRun:
    method: str = args.method
    body = args.body
    headers = _checked_headers(args.headers)
    current_url = str(first.checked.url)
    target = first
    hops: list[str] = []
    for _hop in range(limits.http_max_redirects + 1):
        try:
            response = await _send_once(guard, target, method, headers, body, limits)
        except httpx.TimeoutException:
            raise ToolError(f"the request to {target.checked.authority} timed out") from None
        except httpx.HTTPError as error:
            raise ToolError(
                f"the request to {target.checked.authority} failed ({type(error).__name__})"
            ) from None
        location = response.headers.get("location")
        if response.status not in REDIRECT_STATUSES or not location:
            text = _render(response, current_url, hops)
            failed = response.status >= 400
            return ToolRun(text, failed=failed, error_code="tool_failed" if failed else None)
        try:
            next_url = str(httpx.URL(current_url).join(location))
        except (httpx.InvalidURL, ValueError) as error:
            raise ToolError(f"the server sent an unusable redirect ({error})") from None
        try:
            next_target = await guard.authorize(next_url, ctx.policy.allowed_domains)
        except ToolDenied as denied:
            raise ToolDenied(
                f"a redirect to {next_url[:300]!r} was refused: {denied.message}"
            ) from None
        # What browsers and httpx do: 303 always becomes GET, 301/302 turn a POST into GET.
        if (response.status == 303 and method != "HEAD") or (
            response.status in (301, 302) and method == "POST"
        ):
            method, body = "GET", None
        if next_target.checked.authority != target.checked.authority:
            headers = {k: v for k, v in headers.items() if k.lower() not in _CREDENTIAL_HEADERS}
        hops.append(current_url)
        current_url, target = next_url, next_target
    raise ToolError(f"more than {limits.http_max_redirects} redirects; stopped at {current_url}")


def http_tools(guard: EgressGuard, limits: ToolLimits) -> list[ToolDefinition[HttpRequestArgs]]:
    """The ``http_request`` tool bound to an egress guard."""

    async def prepare(args: HttpRequestArgs, ctx: ToolCallContext) -> PreparedCall:
        _checked_headers(args.headers)
        target = await guard.authorize(args.url, ctx.policy.allowed_domains)
        authority = target.checked.authority

        async def run() -> ToolRun:
            budget_s = limits.http_timeout_s * (limits.http_max_redirects + 1)
            try:
                async with asyncio.timeout(budget_s):
                    return await _fetch(guard, target, args, ctx, limits)
            except TimeoutError:
                raise ToolError(f"the request did not finish within {budget_s:g} s") from None

        return PreparedCall(
            run=run,
            approval=ApprovalNeed(
                action="egress", preview=ApprovalPreview(host=authority), scope_key=authority
            ),
        )

    return [
        ToolDefinition(
            name="http_request",
            description=(
                "Make an HTTPS request to a host listed in the project's allowed_domains. "
                "Private, loopback and metadata addresses are refused. Returns the status, "
                "a few headers and the (size-capped) body."
            ),
            args_model=HttpRequestArgs,
            side_effect="egress",
            replay="side-effecting",
            prepare=prepare,
            summarized_fields=frozenset({"body"}),
            redacted_fields=frozenset(),
        )
    ]
