"""What every JSON-RPC surface (LSP and ACP) says when a request fails.

Protocol-neutral: the numeric code for each domain error kind (clients should switch on
``data.code``, the stable string), and a one-line description of invalid params that names
each bad field without echoing the input back.
"""

from __future__ import annotations

from pydantic import ValidationError

from relavium_lsp.errors import DomainErrorCode

INVALID_PARAMS_CODE = -32602
INTERNAL_ERROR_CODE = -32099
DOMAIN_ERROR_CODES: dict[DomainErrorCode, int] = {
    "session_not_found": -32001,
    "session_busy": -32002,
    "session_ended": -32003,
    "session_running_elsewhere": -32005,
    "memory_conflict": -32006,
    "broad_working_dir": -32007,
    "validation": -32004,
    "provider_rate_limit": -32010,
    "provider_unavailable": -32011,
    "provider_auth": -32012,
    "content_filter": -32013,
    "tool_denied": -32020,
    "tool_failed": -32021,
    "tool_unavailable": -32022,
    "turn_limit": -32030,
    "budget_exceeded": -32031,
    "cancelled": -32040,
    "internal": INTERNAL_ERROR_CODE,
}
MAX_REPORTED_ERRORS = 5


def error_number(kind: DomainErrorCode) -> int:
    """The JSON-RPC error code for a domain error kind."""
    return DOMAIN_ERROR_CODES.get(kind, INTERNAL_ERROR_CODE)


def describe_validation_error(method: str, error: ValidationError) -> str:
    """A one-line, field-naming description of what was wrong with a request's params."""
    problems = []
    for item in error.errors(include_url=False, include_input=False)[:MAX_REPORTED_ERRORS]:
        location = ".".join(str(part) for part in item["loc"]) or "params"
        problems.append(f"{location}: {item['msg']}")
    more = error.error_count() - MAX_REPORTED_ERRORS
    suffix = f" (and {more} more)" if more > 0 else ""
    return f"invalid params for {method}: " + "; ".join(problems) + suffix
