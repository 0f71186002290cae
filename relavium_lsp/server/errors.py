"""Mapping errors to JSON-RPC at the handler edge — and nowhere else.

- pydantic ``ValidationError`` → ``InvalidParams`` (-32602) naming each bad field;
- :class:`~relavium_lsp.errors.RelaviumError` → a server error in -32001…-32099 whose
  ``data.code`` is the stable machine-readable kind;
- anything else → an internal error with a generic message (details go to the log only).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import cast

from pydantic import ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcServerError

from relavium_lsp.errors import DomainErrorCode, RelaviumError

_log = logging.getLogger(__name__)
# pygls leaves this constructor unannotated: (message, code, data=None).
_server_error = cast(Callable[..., JsonRpcException], JsonRpcServerError)

# Stable numeric codes per kind; clients should switch on ``data.code``.
_SERVER_ERROR_CODES: dict[DomainErrorCode, int] = {
    "session_not_found": -32001,
    "session_busy": -32002,
    "session_ended": -32003,
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
    "internal": -32099,
}
MAX_REPORTED_ERRORS = 5


def describe_validation_error(method: str, error: ValidationError) -> str:
    """A one-line, field-naming description of what was wrong with the params."""
    problems = []
    for item in error.errors()[:MAX_REPORTED_ERRORS]:
        location = ".".join(str(part) for part in item["loc"]) or "params"
        problems.append(f"{location}: {item['msg']}")
    more = error.error_count() - MAX_REPORTED_ERRORS
    suffix = f" (and {more} more)" if more > 0 else ""
    return f"invalid params for {method}: " + "; ".join(problems) + suffix


def to_jsonrpc_error(method: str, error: Exception) -> JsonRpcException:
    """Translate any exception raised by a handler into the error the client receives."""
    if isinstance(error, JsonRpcException):
        return error
    if isinstance(error, ValidationError):
        return JsonRpcInvalidParams(describe_validation_error(method, error))
    if isinstance(error, RelaviumError):
        code = _SERVER_ERROR_CODES.get(error.code, -32099)
        return _server_error(error.message, code, data={"code": error.code})
    _log.exception("unexpected error in %s", method)
    return _server_error(
        f"internal error in {method} (see the server log)", -32099, data={"code": "internal"}
    )
