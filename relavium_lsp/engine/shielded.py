"""Awaiting a commit to its end even when the caller is cancelled meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def finish_before_cancelling(operation: Awaitable[T]) -> T:
    """Await ``operation`` to completion even if cancelled meanwhile, then honour the cancel.

    For commits whose outcome the caller must know: a store call cancelled half-way still
    completes in the database thread, so giving up on it would lose what it wrote.
    """
    future = asyncio.ensure_future(operation)
    cancelled = False
    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            cancelled = True
    result = future.result()
    if cancelled:
        raise asyncio.CancelledError
    return result
