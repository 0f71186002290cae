"""Quiet while a turn starts: background store work waits a few milliseconds (issue 25).

A turn's start — the engine has the user's message, the provider request is not written yet
— is a handful of store trips on the one worker thread and some Python on the event loop.
On a small machine whatever else runs meanwhile lands in that window: the worker's periodic
looks (the shared-log marks, the write-ahead log), and the shared-log watcher's trips and
notifications, which our own commits wake on every turn (the status goes to ``streaming``).
Measured, they made most of the per-turn p99.

Nothing of that is urgent: it is another window's news, seen a few milliseconds later. So a
turn start *holds* the gate (:meth:`QuietGate.hold`) and the background work asks it first:

- the worker thread skips a periodic check that falls due while the gate is held and runs it
  once the gate opens (``store/store_thread.py``); the last release wakes it only when it
  skipped something;
- loop-side work awaits :meth:`QuietGate.wait_open` before its trips (``engine/watch.py``).

It must never starve what waits: a hold counts for at most ``limit_s`` (a leaked or slow
turn start stops deferring anything after that), and no piece of work waits longer than
``limit_s`` in all, however many holds follow each other. Holds are taken and released on
the event loop's thread; the worker thread only asks.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable
from types import TracebackType

# How long a hold counts at most, and how long a piece of background work waits at most. A
# turn start takes a few milliseconds; another window's news may come this much later.
QUIET_LIMIT_S = 0.05


class QuietHold:
    """One turn start's hold on the gate; :meth:`release` is idempotent."""

    __slots__ = ("_gate", "_ident")

    def __init__(self, gate: QuietGate, ident: int) -> None:
        self._gate = gate
        self._ident = ident

    def release(self) -> None:
        """Stop holding the gate (on the event loop's thread); later calls do nothing."""
        self._gate._release(self._ident)

    def __enter__(self) -> QuietHold:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


class QuietGate:
    """Held while turns start; background store work waits for it to open (module doc)."""

    def __init__(
        self, wake: Callable[[], None] | None = None, limit_s: float | None = None
    ) -> None:
        """``wake`` is called when the last hold goes and the worker skipped something."""
        self._wake = wake
        # Read when a hold is taken or work first waits: a test may set it.
        self.limit_s = QUIET_LIMIT_S if limit_s is None else limit_s
        self._lock = threading.Lock()
        self._holds: dict[int, float] = {}  # hold -> when it stops counting (monotonic)
        self._ids = itertools.count(1)
        self._skipped = False  # the worker skipped a check since the gate closed
        self._waiters: list[asyncio.Future[None]] = []
        # How many times background work was held back (for tests and tracing).
        self.deferrals = 0

    def hold(self, limit_s: float | None = None) -> QuietHold:
        """Close the gate until the hold is released, or for ``limit_s`` at most."""
        now = time.monotonic()
        with self._lock:
            # A hold never released (a bug) is forgotten here once it stopped counting.
            for ident in [ident for ident, end in self._holds.items() if end <= now]:
                del self._holds[ident]
            ident = next(self._ids)
            self._holds[ident] = now + (self.limit_s if limit_s is None else limit_s)
        return QuietHold(self, ident)

    def quiet_until(self, now: float | None = None) -> float | None:
        """When the holds counting now stop counting (monotonic), or ``None``: open."""
        now = time.monotonic() if now is None else now
        with self._lock:
            return self._until(now)

    def skip(self, now: float) -> float | None:
        """Before background work on the worker: ``None`` to run it, else when holds end.

        Background work is a periodic check or a call set aside (``store/store_thread.py``).

        Answering "held" notes that something was skipped, in the same locked step, so the
        release that opens the gate cannot miss waking the worker.
        """
        with self._lock:
            until = self._until(now)
            if until is not None:
                self._skipped = True
                self.deferrals += 1
            return until

    async def wait_open(self) -> None:
        """Return once the gate is open, or ``limit_s`` after the call at the latest."""
        if not self._holds:  # the usual case: nothing to wait for, no lock, no timer
            return
        loop = asyncio.get_running_loop()
        give_up = time.monotonic() + self.limit_s
        counted = False
        while True:
            now = time.monotonic()
            with self._lock:
                until = self._until(now)
                if until is None or now >= give_up:
                    return
                if not counted:
                    self.deferrals += 1
                    counted = True
                waiter: asyncio.Future[None] = loop.create_future()
                self._waiters.append(waiter)
            timer = loop.call_later(min(until, give_up) - now, _wake_waiter, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                with self._lock:
                    if waiter in self._waiters:
                        self._waiters.remove(waiter)

    def _until(self, now: float) -> float | None:
        ends = [end for end in self._holds.values() if end > now]
        return max(ends) if ends else None

    def _release(self, ident: int) -> None:
        now = time.monotonic()
        with self._lock:
            if self._holds.pop(ident, None) is None or self._until(now) is not None:
                return  # released before, or other turns are still starting
            skipped, self._skipped = self._skipped, False
            waiters, self._waiters = self._waiters, []
        if skipped and self._wake is not None:
            self._wake()
        for waiter in waiters:
            _wake_waiter(waiter)


def _wake_waiter(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
