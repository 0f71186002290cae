"""The store's one worker thread: queued calls, and periodic checks run while it waits.

A :class:`concurrent.futures.ThreadPoolExecutor` with one worker would do for the calls. What
it cannot do is the other half of the job: an idle server looks at the shared database every
100 ms (another window's commits) and at its write-ahead log every second. Done from the
event loop, each look is three wake-ups — the loop's timer, the worker, the loop again for
the answer — and on a small machine a wake-up costs more than the query (issue 25: most of
an idle server's CPU). Here the worker runs those checks itself when they fall due, between
calls or when its wait for the next call times out: one wake-up per look, and the event
loop only hears of it when something moved.

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")
_STOP = object()
_log = logging.getLogger(__name__)
_RUNNING: weakref.WeakSet[StoreThread] = weakref.WeakSet()


@dataclass
class _Periodic:
    interval_s: float
    check: Callable[[], None]
    due: float


class StoreThread(concurrent.futures.Executor):
    """One thread running submitted calls in order, and :meth:`every` check when due."""

    def __init__(self, name: str) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._periodic: list[_Periodic] = []
        self._lock = threading.Lock()
        self._stopping = False
        # A daemon thread drained at exit (below): a forgotten store never hangs the exit.
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._thread.start()
        _RUNNING.add(self)

    def submit(
        self, fn: Callable[..., T], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[T]:
        """Queue ``fn(*args, **kwargs)``; its future."""
        with self._lock:
            if self._stopping:
                raise RuntimeError("cannot schedule new calls after shutdown")
            future: concurrent.futures.Future[T] = concurrent.futures.Future()
            self._queue.put((future, fn, args, kwargs))
        return future

    def every(self, interval_s: float, check: Callable[[], None]) -> Callable[[], None]:
        """Run ``check`` on the thread every ``interval_s``; returns the function that stops it.

        ``check`` must not raise (what it raises is dropped). A check falls due no sooner than
        ``interval_s`` after it last ran; a long call delays it, never runs it twice.
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
                return
            if item is not None:
                future, fn, args, kwargs = item
                if future.set_running_or_notify_cancel():
                    try:
                        result = fn(*args, **kwargs)
                    except BaseException as error:
                        future.set_exception(error)
                    else:
                        future.set_result(result)
                    del future, fn, args, kwargs, item  # no reference kept while waiting
            self._run_due()

    def _wait_s(self) -> float | None:
        with self._lock:
            if not self._periodic:
                return None
            soonest = min(periodic.due for periodic in self._periodic)
        return max(0.0, soonest - time.monotonic())

    def _run_due(self) -> None:
        now = time.monotonic()
        with self._lock:
            due = [periodic for periodic in self._periodic if periodic.due <= now]
        for periodic in due:
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
