"""Registering a custom request: validate params, call, dump the result, map errors.

Every custom method goes through :func:`register_request`, so each one validates its params
with pydantic first (strictly, integers within 64 bits:
:func:`~relavium_lsp.contracts.base.validate_request`), answers camelCase JSON, and turns
failures into the right JSON-RPC error (see :mod:`relavium_lsp.server.errors`). The same
handler backs the matching ``workspace/executeCommand`` command.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from relavium_lsp.contracts.base import WireModel, validate_request
from relavium_lsp.server.errors import to_jsonrpc_error

if TYPE_CHECKING:
    from relavium_lsp.server.core import RawHandler, RelaviumServer

ParamsT = TypeVar("ParamsT", bound=BaseModel)
Result = WireModel | dict[str, Any]


def validated_handler(
    method: str,
    params_model: type[ParamsT],
    implementation: Callable[[RelaviumServer, ParamsT], Awaitable[Result]],
) -> RawHandler:
    """``implementation`` behind params validation, result dumping and error mapping."""

    async def handle(ls: RelaviumServer, raw_params: Any) -> Any:
        try:
            params = validate_request(params_model, raw_params)
            result = await implementation(ls, params)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise to_jsonrpc_error(method, exc) from None
        return result.to_wire() if isinstance(result, WireModel) else result

    return handle


def register_request(
    server: RelaviumServer,
    method: str,
    params_model: type[ParamsT],
    implementation: Callable[[RelaviumServer, ParamsT], Awaitable[Result]],
) -> None:
    """Register ``implementation`` for ``method`` with validation and error mapping."""
    handle = validated_handler(method, params_model, implementation)
    server.request_handlers[method] = handle
    server.feature(method)(handle)
