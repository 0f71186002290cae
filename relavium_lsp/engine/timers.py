"""Where delays come from: the event loop, or a fake clock a test advances."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol


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
