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

from relavium_lsp.errors import RelaviumError
from relavium_lsp.rpc_errors import describe_validation_error, error_number

_log = logging.getLogger(__name__)
# pygls leaves this constructor unannotated: (message, code, data=None).
_server_error = cast(Callable[..., JsonRpcException], JsonRpcServerError)


def to_jsonrpc_error(method: str, error: Exception) -> JsonRpcException:
    """Translate any exception raised by a handler into the error the client receives."""
    if isinstance(error, JsonRpcException):
        return error
    if isinstance(error, ValidationError):
        return JsonRpcInvalidParams(describe_validation_error(method, error))
    if isinstance(error, RelaviumError):
        data = {"code": error.code, **error.details()}
        return _server_error(error.message, error_number(error.code), data=data)
    _log.exception("unexpected error in %s", method)
    return _server_error(
        f"internal error in {method} (see the server log)", -32099, data={"code": "internal"}
    )
