"""The store's one worker thread: queued calls, and periodic checks run while it waits.

A :class:`concurrent.futures.ThreadPoolExecutor` with one worker would do for the calls. What
it cannot do is the other half of the job: an idle server looks at the shared database every
100 ms (another window's commits) and at its write-ahead log every second. Done from the
event loop, each look is three wake-ups — the loop's timer, the worker, the loop again for
the answer — and on a small machine a wake-up costs more than the query (issue 25: most of
an idle server's CPU). Here the worker runs those checks itself when they fall due, between
calls or when its wait for the next call times out: one wake-up per look, and the event
loop only hears of it when something moved.

While a turn starts, background work waits (``store/quiet_gate.py``): a check that falls due
while :attr:`StoreThread.quiet` is held is skipped, and a call submitted with
:meth:`StoreThread.submit_background` (a read whose answer may be newer than when it was
asked: the shared-log watcher's) is set aside when its turn comes; both run once the gate
opens, or once they have waited the gate's limit — they must not land in a turn's first
store trips. Calls submitted with :meth:`~StoreThread.submit` keep their order and overtake
the background calls set aside.

Calls submitted are always run, in order, to completion; :meth:`shutdown` lets the queued
ones finish. At interpreter exit the thread finishes what is queued first, as the standard
executor's threads do.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import logging
import queue
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from relavium_lsp.store.quiet_gate import QuietGate

T = TypeVar("T")
_STOP = object()
_log = logging.getLogger(__name__)
_RUNNING: weakref.WeakSet[StoreThread] = weakref.WeakSet()


@dataclass
class _Periodic:
    interval_s: float
    check: Callable[[], None]
    due: float
    # While the quiet gate holds it back: since when, and when to look again at the latest.
    deferred_since: float | None = None
    retry_at: float = 0.0


class StoreThread(concurrent.futures.Executor):
    """One thread running submitted calls in order, and :meth:`every` check when due."""

    def __init__(self, name: str) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._periodic: list[_Periodic] = []
        self._lock = threading.Lock()
        self._stopping = False
        # Background calls set aside while the gate was held: (since when, the call).
        self._parked: deque[tuple[float, Any]] = deque()
        # Held while a turn starts: background work waits (the last release wakes us).
        self.quiet = QuietGate(wake=lambda: self._queue.put(None))
        # A daemon thread drained at exit (below): a forgotten store never hangs the exit.
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._thread.start()
        _RUNNING.add(self)

    def submit(
        self, fn: Callable[..., T], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[T]:
        """Queue ``fn(*args, **kwargs)``; its future."""
        return self._queue_call(fn, args, kwargs, background=False)

    def submit_background(
        self, fn: Callable[..., T], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[T]:
        """Queue ``fn(*args, **kwargs)``, to wait while the :attr:`quiet` gate is held.

        Only for calls whose order does not matter: it may run after calls submitted later
        (a read that may see their commits).
        """
        return self._queue_call(fn, args, kwargs, background=True)

    def _queue_call(
        self,
        fn: Callable[..., T],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        background: bool,
    ) -> concurrent.futures.Future[T]:
        with self._lock:
            if self._stopping:
                raise RuntimeError("cannot schedule new calls after shutdown")
            future: concurrent.futures.Future[T] = concurrent.futures.Future()
            self._queue.put((future, fn, args, kwargs, background))
        return future

    def every(self, interval_s: float, check: Callable[[], None]) -> Callable[[], None]:
        """Run ``check`` on the thread every ``interval_s``; returns the function that stops it.

        ``check`` must not raise (what it raises is dropped). A check falls due no sooner than
        ``interval_s`` after it last ran; a long call delays it, never runs it twice; a held
        :attr:`quiet` gate delays it until it opens (at most its ``limit_s``).
        """
        periodic = _Periodic(interval_s, check, time.monotonic() + interval_s)
        with self._lock:
            self._periodic.append(periodic)
        self._queue.put(None)  # wake the thread: its wait may now be shorter

        def stop() -> None:
            with self._lock:
                if periodic in self._periodic:
                    self._periodic.remove(periodic)

        return stop

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop after the calls already queued (``cancel_futures`` is not supported)."""
        with self._lock:
            if not self._stopping:
                self._stopping = True
                self._periodic.clear()
                self._queue.put(_STOP)
        if wait and threading.current_thread() is not self._thread:
            self._thread.join()

    def _work(self) -> None:
        while True:
            try:
                item = self._queue.get(timeout=self._wait_s())
            except queue.Empty:
                item = None
            if item is _STOP:
                while self._parked:  # what was queued is run, set aside or not
                    self._run(self._parked.popleft()[1])
                return
            if item is not None:
                if item[4] and (self._parked or self._held(time.monotonic(), None)):
                    self._parked.append((time.monotonic(), item))
                else:
                    self._run(item)
                del item  # no reference kept while waiting
            if self._parked:
                self._run_parked()
            self._run_due()

    @staticmethod
    def _run(item: Any) -> None:
        future, fn, args, kwargs, _background = item
        if future.set_running_or_notify_cancel():
            try:
                result = fn(*args, **kwargs)
            except BaseException as error:
                future.set_exception(error)
            else:
                future.set_result(result)

    def _held(self, now: float, since: float | None) -> float | None:
        """While the gate holds back work waiting since ``since``: when to look again."""
        until = self.quiet.skip(now)
        if until is None:
            return None
        since = now if since is None else since
        if now - since >= self.quiet.limit_s:
            return None  # waited long enough: it must not starve
        return min(until, since + self.quiet.limit_s)

    def _run_parked(self) -> None:
        while self._parked:
            since, item = self._parked[0]
            if self._held(time.monotonic(), since) is not None:
                return
            self._parked.popleft()
            self._run(item)
            del item

    def _wait_s(self) -> float | None:
        with self._lock:
            soonest = min(
                (
                    periodic.due if periodic.deferred_since is None else periodic.retry_at
                    for periodic in self._periodic
                ),
                default=None,
            )
        if self._parked:
            # The oldest call set aside runs once the gate opens (a release wakes this
            # thread, a hold's end does not) or once it has waited the gate's limit.
            retry = self._parked[0][0] + self.quiet.limit_s
            until = self.quiet.quiet_until()
            retry = 0.0 if until is None else min(retry, until)
            soonest = retry if soonest is None else min(soonest, retry)
        if soonest is None:
            return None
        return max(0.0, soonest - time.monotonic())

    def _run_due(self) -> None:
        now = time.monotonic()
        with self._lock:
            due = [periodic for periodic in self._periodic if periodic.due <= now]
        if not due:
            return
        for periodic in due:
            retry = self._held(now, periodic.deferred_since)
            if retry is not None:
                # A turn is starting: look again when the gate opens (the release wakes this
                # thread) or when waiting any longer could starve the check.
                if periodic.deferred_since is None:
                    periodic.deferred_since = now
                periodic.retry_at = retry
                continue
            periodic.deferred_since = None
            try:
                periodic.check()
            except Exception:  # a check must not end the thread
                _log.debug("a periodic store check failed", exc_info=True)
            periodic.due = time.monotonic() + periodic.interval_s


@atexit.register
def _drain_at_exit() -> None:
    # Runs before daemon threads are stopped: what was queued (a turn's last events) is written.
    for thread in list(_RUNNING):
        thread.shutdown(wait=True)
