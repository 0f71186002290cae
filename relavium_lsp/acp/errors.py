"""Mapping errors to ACP (JSON-RPC) errors at the handler edge — and nowhere else.

- pydantic ``ValidationError`` → ``Invalid params`` (-32602) naming the bad fields;
- :class:`~relavium_lsp.errors.RelaviumError` → a server error in -32001…-32099 whose
  ``data.code`` is the stable kind (the same numbers the LSP surface uses);
- a turn that settled with an error → the same, from its :class:`TurnError`;
- anything else → an internal error with a generic message (details only in the log).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from acp import RequestError
from pydantic import ValidationError

from relavium_lsp.contracts.events import TurnError
from relavium_lsp.errors import RelaviumError
from relavium_lsp.rpc_errors import (
    INTERNAL_ERROR_CODE,
    describe_validation_error,
    error_number,
)

_log = logging.getLogger(__name__)


def invalid_params(message: str) -> RequestError:
    """``Invalid params`` with a human-readable explanation."""
    return RequestError(-32602, message, {"code": "validation"})


def turn_error(error: TurnError) -> RequestError:
    """The error a ``session/prompt`` answers with when the turn itself failed."""
    code = error_number(error.code)
    return RequestError(code, error.message, {"code": error.code, "retryable": error.retryable})


def to_request_error(method: str, error: Exception) -> RequestError:
    """Translate any exception a handler raised into the error the client receives."""
    if isinstance(error, RequestError):
        return error
    if isinstance(error, ValidationError):
        return invalid_params(describe_validation_error(method, error))
    if isinstance(error, RelaviumError):
        code = error_number(error.code)
        return RequestError(code, error.message, {"code": error.code, **error.details()})
    _log.exception("unexpected error in %s", method)
    return RequestError(
        INTERNAL_ERROR_CODE, f"internal error in {method} (see the log)", {"code": "internal"}
    )


@contextlib.contextmanager
def acp_edge(method: str) -> Iterator[None]:
    """Translate whatever a handler raises into the ACP error the client receives."""
    try:
        yield
    except RequestError:
        raise
    except Exception as error:
        raise to_request_error(method, error) from None
