"""Waiting in the engine: a commit awaited to its end, and where delays come from.

:func:`finish_before_cancelling` awaits a commit to its end even when the caller is cancelled
meanwhile; :class:`Timers` are the event loop's, or a fake clock a test advances.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

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


class Timer(Protocol):
    """A scheduled callback that can still be called off."""

    def cancel(self) -> None:
        """Do not call it."""


class Timers(Protocol):
    """Where delays come from (the event loop; a fake one in tests)."""

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        """Call ``callback`` after ``delay`` seconds."""
        ...


class LoopTimers:
    """:class:`Timers` on the running event loop."""

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        """``loop.call_later``."""
        return asyncio.get_running_loop().call_later(delay, callback)
