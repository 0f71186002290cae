"""Bedrock's exceptions — in an HTTP error or inside the event stream — as seam errors.

Bedrock names its errors (``x-amzn-ErrorType`` on an HTTP error, ``:exception-type`` on a
stream message). The name decides the kind, and the three a user can act on get advice:
access to the model not granted (``AccessDeniedException``), a model id unknown in the
region (``ResourceNotFoundException``), and credentials refused (``UnrecognizedClient``,
``InvalidSignature``, ``ExpiredToken``). ``retry-after`` is read where Bedrock sends one.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from relavium_lsp.llm.http_call import CallTarget, parse_retry_after, status_kind
from relavium_lsp.llm.json_codec import loads
from relavium_lsp.llm.redaction import user_safe_detail
from relavium_lsp.llm.seam import LlmError, LlmErrorKind

EXCEPTION_KINDS: dict[str, LlmErrorKind] = {
    "throttlingexception": "rate_limit",
    "servicequotaexceededexception": "rate_limit",
    "toomanyrequestsexception": "rate_limit",
    "serviceunavailableexception": "overloaded",
    "modelnotreadyexception": "overloaded",
    "internalserverexception": "overloaded",
    "modelerrorexception": "overloaded",
    "modeltimeoutexception": "timeout",
    "modelstreamerrorexception": "transport",
    "validationexception": "bad_request",
    "resourcenotfoundexception": "bad_request",
    "conflictexception": "bad_request",
    "accessdeniedexception": "auth",
    "unrecognizedclientexception": "auth",
    "invalidsignatureexception": "auth",
    "incompletesignatureexception": "auth",
    "expiredtokenexception": "auth",
    "missingauthenticationtokenexception": "auth",
}
_CREDENTIAL_ERRORS = frozenset(
    {
        "unrecognizedclientexception",
        "invalidsignatureexception",
        "incompletesignatureexception",
        "expiredtokenexception",
        "missingauthenticationtokenexception",
    }
)


@dataclass(frozen=True)
class BedrockContext:
    """What advice needs: the provider, its region and where its credentials come from."""

    provider_id: str
    region: str
    credentials_source: str


def exception_name(raw: str) -> str:
    """``ValidationException:http://…`` or ``validationException`` → ``validationexception``."""
    return raw.split(":", 1)[0].strip().lower()


def bedrock_error(
    context: BedrockContext,
    name: str,
    detail: str,
    *,
    status: int | None = None,
    retry_after_s: float | None = None,
    secrets: tuple[str | None, ...] = (),
) -> LlmError:
    """The seam error for a Bedrock exception ``name`` with its message ``detail``."""
    key = exception_name(name)
    kind = EXCEPTION_KINDS.get(key) or (status_kind(status) if status else "unknown")
    safe = user_safe_detail(detail, secrets)
    label = name.split(":", 1)[0] or "error"
    message = f"{context.provider_id}: {label}" + (f": {safe}" if safe else "")
    if key == "accessdeniedexception":
        message += (
            f". Request access to this model in the Bedrock console (Model access) in "
            f"{context.region}, and check that the IAM policy allows "
            "bedrock:InvokeModelWithResponseStream"
        )
    elif key in _CREDENTIAL_ERRORS:
        message += f". AWS refused the credentials from {context.credentials_source}"
    elif key == "resourcenotfoundexception":
        message += f". Is the model id right, and is the model offered in {context.region}?"
    elif key == "validationexception" and "inference profile" in safe.lower():
        message += ". Use the model's inference profile id (for example us.<model id>) as the model"
    return LlmError(kind=kind, message=message, status=status, retry_after_s=retry_after_s)


def _detail(body: bytes) -> str:
    try:
        payload = loads(body)
    except ValueError:
        return body.decode("utf-8", "replace")
    if isinstance(payload, dict):
        for key in ("message", "Message"):
            if isinstance(payload.get(key), str):
                return str(payload[key])
    return ""


def explain_bedrock_status(
    context: BedrockContext, target: CallTarget, status: int, headers: httpx.Headers, body: bytes
) -> LlmError:
    """The error for an HTTP error answer from Bedrock."""
    name = headers.get("x-amzn-errortype") or ""
    if not name:
        try:
            payload = loads(body)
        except ValueError:
            payload = None
        if isinstance(payload, dict) and isinstance(payload.get("__type"), str):
            name = payload["__type"].rsplit("#", 1)[-1]
    return bedrock_error(
        context,
        name,
        _detail(body),
        status=status,
        retry_after_s=parse_retry_after(headers),
        secrets=(target.secret,),
    )


def stream_exception(
    context: BedrockContext, name: str, payload: bytes, secret: str | None
) -> LlmError:
    """The error for an exception message inside the event stream."""
    return bedrock_error(context, name, _detail(payload), secrets=(secret,))
