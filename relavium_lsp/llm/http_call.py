"""One streaming HTTP call with every failure turned into a final :class:`ErrorChunk`.

Both adapters share this: they build the request, then hand a ``parse`` function that turns
a successful streaming response into chunks. Everything around it — HTTP status mapping,
``retry-after``, timeouts, dropped connections, redaction of the key from provider text —
lives here so the two adapters cannot disagree about it.

Status mapping (``docs/design.md`` §5): 401/403 → ``auth``; 400/404/409/413/422 →
``bad_request`` (or ``content_filter`` when the provider says the content policy rejected the
request, ``context_length`` when it says the request is larger than the model's context
window — with the token count it reported, if any); 408 → ``timeout``; 429 →
``rate_limit``; 5xx and 529 → ``overloaded``. Transport
faults: no byte for ``timeout_s`` → ``timeout``; refused, reset or truncated connections →
``transport``.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.errors import RelaviumError
from relavium_lsp.llm.redaction import user_safe_detail
from relavium_lsp.llm.seam import ErrorChunk, LlmChunk, LlmError, LlmErrorKind
from relavium_lsp.llm.stream_guard import StreamGuard

logger = logging.getLogger(__name__)

_ERROR_BODY_LIMIT = 64 * 1024
_INCOMPLETE = "the stream ended before the response was complete"
_MAX_RETRY_AFTER_S = 86_400.0
_CONTENT_POLICY_MARKERS = (
    "content_filter",
    "content filter",
    "content_policy",
    "content policy",
    "safety system",
)

# How providers say a request does not fit the model's context window: OpenAI's code
# ``context_length_exceeded``, Anthropic's "prompt is too long", vLLM's "maximum context
# length", llama.cpp's ``exceed_context_size_error``, and the like.
_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "context length",
    "context window",
    "context_window",
    "exceed_context_size",
    "exceeds the available context",
    "prompt is too long",
    "input is too long",
    "too many tokens",
)
# Where they say how many tokens the request held, most specific first.
_REPORTED_TOKENS = (
    re.compile(r"resulted in ([\d,]+) tokens"),  # OpenAI
    re.compile(r"([\d,]+) in the messages"),  # vLLM
    re.compile(r"([\d,]+) tokens? > [\d,]+"),  # Anthropic
    re.compile(r'"n_prompt_tokens"\s*:\s*(\d+)'),  # llama.cpp
)


def context_overflow(text: str) -> tuple[bool, int | None]:
    """Whether an error text says the request exceeded the context window, and its size.

    The size is the token count the provider said the request held (``None``: not said).
    """
    lowered = text.lower()
    if not any(marker in lowered for marker in _CONTEXT_MARKERS):
        return False, None
    for pattern in _REPORTED_TOKENS:
        found = pattern.search(lowered)
        if found is not None:
            return True, int(found.group(1).replace(",", ""))
    return True, None


class CredentialsUnavailable(RelaviumError):
    """No usable credential; the message says where they were looked for and what to do."""

    code = "provider_auth"


# Adds a request's credentials to its headers, given the exact body (``llm/authorized_http.py``).
Authorize = Callable[[Mapping[str, str], bytes], Awaitable[Mapping[str, str]]]


@dataclass(frozen=True)
class CallTarget:
    """Where a call goes and how to describe it without leaking anything."""

    provider_id: str
    url: str
    headers: Mapping[str, str]
    timeout_s: float
    secret: str | None
    key_hint: str

    @property
    def host(self) -> str:
        """The host alone: URLs may carry credentials, hosts do not."""
        return httpx.URL(self.url).host or "the provider"


def status_kind(status: int) -> LlmErrorKind:
    """The error kind an HTTP status stands for."""
    if status in (401, 403):
        return "auth"
    if status == 408:
        return "timeout"
    if status == 429:
        return "rate_limit"
    if status >= 500:
        return "overloaded"
    if status >= 400:
        return "bad_request"
    return "unknown"


_ERROR_TYPE_KINDS: dict[str, LlmErrorKind] = {
    "rate_limit_error": "rate_limit",
    "rate_limit_exceeded": "rate_limit",
    "insufficient_quota": "rate_limit",
    "overloaded_error": "overloaded",
    "api_error": "overloaded",
    "server_error": "overloaded",
    "service_unavailable": "overloaded",
    "authentication_error": "auth",
    "permission_error": "auth",
    "invalid_api_key": "auth",
    "billing_error": "auth",
    "invalid_request_error": "bad_request",
    "not_found_error": "bad_request",
    "request_too_large": "bad_request",
    "timeout_error": "timeout",
}


def error_type_kind(error_type: str) -> LlmErrorKind:
    """The kind for a provider's error ``type`` / ``code`` string (in-stream errors)."""
    lowered = error_type.lower()
    if any(marker in lowered for marker in _CONTENT_POLICY_MARKERS):
        return "content_filter"
    for word in lowered.split():
        kind = _ERROR_TYPE_KINDS.get(word)
        if kind is not None:
            return kind
        if len(word) == 3 and word.isdigit():
            # vLLM and friends put the HTTP status they would have sent in ``code``.
            return status_kind(int(word))
    return "unknown"


def in_stream_error(
    provider_id: str, payload: Any, secret: str | None, usage: TokenUsage
) -> ErrorChunk:
    """An ``error`` object sent inside a 200 stream, as a final chunk."""
    body = json.dumps(payload)
    code, detail = _error_fields(body.encode())
    kind = error_type_kind(code)
    overflow, reported = context_overflow(body)
    if overflow and kind in ("bad_request", "unknown"):
        kind = "context_length"
    safe = user_safe_detail(detail or code or "error", [secret])
    return ErrorChunk(
        error=LlmError(
            kind=kind,
            message=f"{provider_id}: the stream failed: {safe}",
            reported_tokens=reported if kind == "context_length" else None,
        ),
        usage=usage,
    )


def _seconds(value: float) -> float | None:
    if math.isnan(value):
        return None
    return min(max(0.0, value), _MAX_RETRY_AFTER_S)


def parse_retry_after(headers: httpx.Headers, *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return _seconds(float(milliseconds) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return _seconds(float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return _seconds(moment.timestamp() - (time.time() if now is None else now))


def _error_fields(body: bytes) -> tuple[str, str]:
    """``(type-or-code, message)`` from an OpenAI- or Anthropic-shaped error body."""
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        return "", body.decode("utf-8", "replace")
    error = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
    if isinstance(error, dict):
        code = " ".join(str(error.get(key) or "") for key in ("type", "code")).strip()
        message = error.get("message")
        return code, message if isinstance(message, str) else ""
    if isinstance(error, str):
        return "", error
    return "", ""


def error_from_status(
    target: CallTarget, status: int, headers: httpx.Headers, body: bytes
) -> LlmError:
    """Build the user-safe error for a non-2xx response."""
    kind = status_kind(status)
    code, detail = _error_fields(body)
    retry_after = parse_retry_after(headers)
    if kind == "auth":
        # Auth failures often echo the (masked) key; say what to do instead of quoting them.
        if target.secret:
            message = (
                f"{target.provider_id}: authentication failed (HTTP {status}). Check the API "
                f"key ({target.key_hint})."
            )
        else:
            message = (
                f"{target.provider_id}: no API key is configured (HTTP {status}). Add one with "
                f"{target.key_hint}."
            )
        return LlmError(kind=kind, message=message, status=status)
    lowered = f"{code} {detail}".lower()
    reported = None
    if kind == "bad_request" and any(marker in lowered for marker in _CONTENT_POLICY_MARKERS):
        kind = "content_filter"
    elif kind == "bad_request":
        overflow, reported = context_overflow(body.decode("utf-8", "replace"))
        if overflow:
            kind = "context_length"
    safe = user_safe_detail(detail or code, [target.secret])
    message = f"{target.provider_id}: HTTP {status} from {target.host}"
    if safe:
        message += f": {safe}"
    return LlmError(
        kind=kind,
        message=message,
        status=status,
        retry_after_s=retry_after,
        reported_tokens=reported,
    )


def error_from_exception(target: CallTarget, exc: Exception) -> LlmError:
    """Build the user-safe error for a transport-level failure."""
    if isinstance(exc, CredentialsUnavailable):
        return LlmError(kind="auth", message=exc.message)
    if isinstance(exc, httpx.TimeoutException):
        phase = "connecting to" if isinstance(exc, httpx.ConnectTimeout) else "waiting for"
        return LlmError(
            kind="timeout",
            message=(
                f"{target.provider_id}: no response after {target.timeout_s:g}s {phase} "
                f"{target.host}"
            ),
        )
    if isinstance(exc, httpx.ConnectError):
        return LlmError(
            kind="transport", message=f"{target.provider_id}: could not connect to {target.host}"
        )
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return LlmError(
            kind="bad_request", message=f"{target.provider_id}: the base URL is not usable"
        )
    if isinstance(exc, httpx.HTTPError | OSError):
        return LlmError(
            kind="transport",
            message=(
                f"{target.provider_id}: the connection to {target.host} broke mid-response "
                f"({type(exc).__name__})"
            ),
        )
    return LlmError(
        kind="unknown",
        message=f"{target.provider_id}: unexpected adapter failure ({type(exc).__name__})",
    )


async def _read_bounded(response: httpx.Response) -> bytes:
    collected = bytearray()
    async for piece in response.aiter_bytes():
        collected += piece
        if len(collected) >= _ERROR_BODY_LIMIT:
            break
    return bytes(collected[:_ERROR_BODY_LIMIT])


class StreamDecoder(Protocol):
    """Turns a successful response body into chunks, a network read at a time.

    ``feed`` and ``finish`` end with a terminal chunk (stop or error) at most once; after
    it they return nothing more. ``usage`` is what the response reported so far.
    """

    @property
    def usage(self) -> TokenUsage:
        """Tokens reported so far."""
        ...

    def feed(self, data: bytes) -> list[LlmChunk]:
        """The chunks these bytes complete."""
        ...

    def finish(self) -> list[LlmChunk]:
        """At end of body: the closing chunks (an error if the answer was incomplete)."""
        ...


DecoderFactory = Callable[[str], StreamDecoder]
# Builds the error for a non-2xx answer: ``(target, status, headers, body)``.
StatusExplainer = Callable[[CallTarget, int, httpx.Headers, bytes], LlmError]


async def stream_call(
    client: httpx.AsyncClient,
    target: CallTarget,
    build_body: Callable[[], dict[str, Any] | bytes],
    make_decoder: DecoderFactory,
    explain: StatusExplainer = error_from_status,
    authorize: Authorize | None = None,
) -> AsyncIterator[LlmChunk]:
    """POST the body and yield the decoded chunks; never raise for a fault.

    ``make_decoder`` receives the response's content type; ``explain`` turns an HTTP error
    answer into the error (a provider whose errors say more than the status overrides it).
    A body given as bytes is sent as they are (JSON), after ``authorize`` added the
    credentials worked out for those very bytes (a token, a signature) — one that cannot be
    had is an ``auth`` error. Whatever the decoder makes of the
    body, a :class:`StreamGuard` keeps the seam's promises: every started tool call ends,
    exactly one final chunk, and an error after billable output is never retryable. Only
    ``asyncio.CancelledError`` (and closing the generator) escape; either leaves the
    ``async with`` block, which closes the response and with it the connection. After the
    stop chunk the rest of the body is still read (it is normally just the end of the
    chunked encoding) so the connection can return to the pool; a fault while doing so is
    ignored.
    """
    failure: LlmError | None = None
    decoder: StreamDecoder | None = None
    guard = StreamGuard()
    try:
        body = build_body()
        headers = dict(target.headers)
        if isinstance(body, bytes):
            headers["content-type"] = "application/json"
            if authorize is not None:
                headers = dict(await authorize(headers, body))
        async with client.stream(
            "POST",
            target.url,
            content=body if isinstance(body, bytes) else None,
            json=None if isinstance(body, bytes) else body,
            headers=headers,
            timeout=httpx.Timeout(target.timeout_s),
        ) as response:
            if response.status_code >= 400:
                error_body = await _read_bounded(response)
                failure = explain(target, response.status_code, response.headers, error_body)
            else:
                decoder = make_decoder(response.headers.get("content-type", ""))
                admit = guard.admit
                async for data in response.aiter_bytes():
                    if guard.ended:
                        continue
                    admitted = admit(decoder.feed(data))
                    for chunk in admitted:
                        yield chunk
                    # A final chunk is always the last one admitted; after an error, stop.
                    if guard.ended and type(admitted[-1]) is ErrorChunk:
                        return
                if not guard.ended:
                    for chunk in guard.admit(decoder.finish()):
                        yield chunk
                if not guard.ended:
                    failure = LlmError(kind="transport", message=_INCOMPLETE)
    except Exception as exc:  # every fault becomes a typed chunk; cancellation is not one
        logger.debug("provider %s call failed: %s", target.provider_id, type(exc).__name__)
        if guard.ended:
            return
        failure = error_from_exception(target, exc)
    if failure is not None:
        logger.debug(
            "provider %s: %s (status %s)", target.provider_id, failure.kind, failure.status
        )
        usage = decoder.usage if decoder is not None else TokenUsage()
        for chunk in guard.final(ErrorChunk(error=failure, usage=usage)):
            yield chunk
