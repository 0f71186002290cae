"""The session store for the event loop: every call runs on one dedicated worker thread.

SQLCipher calls block (disk, the write lock of another process), so they never run on the
event loop. The :class:`SessionStore` is opened *in* the worker thread and only ever used
there, which is why the connection may be opened with ``check_same_thread=False``.

Cancellation: once a callable is submitted it runs to completion on the worker thread. If
the awaiting coroutine is cancelled meanwhile, the result is dropped, never half-applied —
each repository method is one transaction.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import sqlcipher3

from relavium_lsp.errors import StoreError
from relavium_lsp.store.damage import corrupted, is_corruption
from relavium_lsp.store.disk_full import disk_full, is_disk_full
from relavium_lsp.store.keys import DbKey
from relavium_lsp.store.sessions import SessionStore
from relavium_lsp.store.store_thread import StoreThread
from relavium_lsp.store.wal_guard import LogGuard

# How often an idle server looks at its write-ahead log (a stat of one file).
WAL_WATCH_INTERVAL_S = 1.0

logger = logging.getLogger(__name__)

T = TypeVar("T")
M = TypeVar("M")


class AsyncSessionStore:
    """An async facade over one :class:`SessionStore`; also the tools' ``ArtifactStore``."""

    def __init__(
        self,
        executor: StoreThread,
        store: SessionStore,
        path: Path,
        key: DbKey | None = None,
    ) -> None:
        """Wrap a store already opened on ``executor``'s only thread (use :meth:`open`)."""
        self._executor = executor
        self._store = store
        self._path = path
        self._key = key
        self._closed = False
        self._log_path = path.with_name(path.name + "-wal")  # SQLite's name for it
        self._log_guard = LogGuard(self._log_path)
        # The worker looks at the log itself now and then, not only when a call comes.
        self._stop_log_watch = executor.every(WAL_WATCH_INTERVAL_S, self._check_log_if_open)

    @classmethod
    async def open(cls, path: Path, key: DbKey) -> AsyncSessionStore:
        """Start the worker thread and open (and migrate) the database on it."""
        executor = StoreThread("relavium-store")
        try:
            store = await _await_on(executor, lambda: SessionStore.open(path, key))
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(executor, store, path, key)

    def _check_log_if_open(self) -> None:
        if not self._closed:
            self._check_log()

    def watch(
        self,
        interval_s: float,
        read: Callable[[SessionStore], M],
        last: M,
        moved: Callable[[], None],
    ) -> Callable[[], None]:
        """Every ``interval_s``, ``read`` on the worker; ``moved()`` on the loop when it changed.

        ``last`` is the value already seen. The worker does the looking itself (one wake-up
        per look, none of the event loop's: ``store/store_thread.py``); the loop is called only
        when the value differs from the one last seen. Returns the function that stops it.
        """
        loop = asyncio.get_running_loop()
        seen = [last]

        def look() -> None:
            if self._closed:
                return
            value = self._call(read)
            if value != seen[0]:
                seen[0] = value
                try:
                    loop.call_soon_threadsafe(moved)
                except RuntimeError:  # the loop is gone: nobody is watching any more
                    pass

        return self._executor.every(interval_s, look)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    async def run(self, fn: Callable[[SessionStore], T]) -> T:
        """Run ``fn(store)`` on the worker thread and return its result."""
        if self._closed:
            raise StoreError("the session store is closed")
        return await _await_on(self._executor, lambda: self._call(fn))

    def submit(self, fn: Callable[[SessionStore], T]) -> asyncio.Future[T]:
        """Queue ``fn(store)`` now and return a future of its result.

        Unlike :meth:`run` (which queues when its coroutine first runs), the call is in the
        worker's queue when this returns, so it runs before any store call made afterwards —
        for writes that go on in the background while their caller carries on. The work runs
        to completion whether or not anyone awaits the future.
        """
        if self._closed:
            raise StoreError("the session store is closed")
        return _queue_on(self._executor, lambda: self._call(fn))

    def _call(self, fn: Callable[[SessionStore], T]) -> T:
        """Run ``fn`` on the worker thread; damage becomes :class:`DatabaseCorrupted`.

        SQLCipher leaves a connection that met a damaged page failing every later statement,
        even those that never touch that page, so the connection is reopened: sessions in
        undamaged parts of the file keep working (issue 16).
        """
        try:
            return fn(self._store)
        except (sqlcipher3.DatabaseError, OSError) as error:
            if is_disk_full(error):
                logger.warning("no space left for the history database %s", self._path)
                raise disk_full(self._path) from None
            if isinstance(error, OSError) or not is_corruption(error):
                raise
            logger.warning("the history database %s is damaged: %s", self._path, error)
            self._reopen()
            raise corrupted(self._path, str(error)) from None
        finally:
            self._check_log()

    def _check_log(self) -> None:
        """Checkpoint and reopen when the write-ahead log went away (see ``wal_guard``)."""
        what = self._log_guard.change()
        if what is None:
            return
        logger.warning(
            "the history database's write-ahead log %s was %s while the server was running; "
            "checkpointing now so that no saved message depends on it",
            self._log_path,
            what,
        )
        try:
            self._store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except Exception as error:
            logger.warning("the checkpoint after the log went away failed: %s", error)
        self._reopen()
        self._log_guard.rearm()

    def _reopen(self) -> None:
        if self._key is None:
            return
        try:
            self._store.close()
        except Exception as error:  # closing a damaged connection may fail too; reopen anyway
            logger.debug("closing the damaged connection failed: %s", type(error).__name__)
        try:
            self._store = SessionStore.open(self._path, self._key)
        except Exception as error:  # the caller still learns about the damage itself
            logger.warning("reopening the damaged history database failed: %s", error)

    async def close(self) -> None:
        """Finish queued calls, close the connection and stop the thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._stop_log_watch()
        try:
            await _await_on(self._executor, self._store.close)
        finally:
            self._executor.shutdown(wait=False)

    async def __aenter__(self) -> AsyncSessionStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def sync_log(self) -> None:
        """Force everything committed so far to disk: fsync the write-ahead log.

        For commits made with ``wait_for_disk=False``. It runs on a thread of its own, not the
        store's worker, so the commits queued meanwhile (a token stream's events) do not wait
        for the disk; an fsync of the file flushes whatever the log holds at that moment.
        """
        await asyncio.to_thread(_fsync, self._log_path)

    async def save_artifact(self, session_id: str, call_id: str, text: str) -> str:
        """Store a tool's full output and return its artifact id."""
        return await self.run(lambda store: store.save_artifact(session_id, call_id, text))

    async def load_artifact(self, session_id: str, artifact_id: str) -> str | None:
        """Return a stored artifact of this session, or ``None``."""
        return await self.run(lambda store: store.load_artifact(session_id, artifact_id))


def _fsync(path: Path) -> None:
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return  # no log right now: a checkpoint moved (and synced) it into the database
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


async def _await_on(executor: concurrent.futures.Executor, call: Callable[[], T]) -> T:
    """Submit ``call`` and await it without ever cancelling the submitted work."""
    return await _queue_on(executor, call)


def _queue_on(executor: concurrent.futures.Executor, call: Callable[[], T]) -> asyncio.Future[T]:
    """Submit ``call`` now and return the future its result arrives in.

    Cancelling that future drops the result, never the submitted work.
    """
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[T] = loop.create_future()
    work = executor.submit(call)

    def deliver(done: concurrent.futures.Future[T]) -> None:
        error = done.exception()
        if waiter.done():
            if error is not None:
                logger.warning("an abandoned store call failed: %s", type(error).__name__)
            return
        if error is not None:
            waiter.set_exception(error)
        else:
            waiter.set_result(done.result())

    def hand_over(done: concurrent.futures.Future[T]) -> None:
        try:
            loop.call_soon_threadsafe(deliver, done)
        except RuntimeError:
            # The loop is gone (shutdown); nobody is waiting for this result any more.
            logger.debug("store call finished after its event loop closed")

    work.add_done_callback(hand_over)
    return waiter
