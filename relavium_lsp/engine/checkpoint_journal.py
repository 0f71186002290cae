"""A turn's file checkpoints, written in batches (docs/design.md §6.3).

:class:`TurnJournal` is the tools' :class:`~relavium_lsp.tools.base.ChangeJournal` for the turn
started by one user message. Tools *tell* it about files — the text before the turn first
changes one, the text the agent left after each change — which costs nothing on the event
loop; the notes are written by the store's worker thread, many in one transaction
(:func:`~relavium_lsp.store.file_checkpoints.record_changes`: hashing, encryption and the
commit all happen there). One encrypted commit per file was most of a checkpoint's cost
(issue 19: 100 files took 63 ms; one transaction for all of them takes a fraction of that).

When notes are written:

- :meth:`TurnJournal.commit` writes everything told so far and returns once it is committed.
  Tools call it before a change reaches the editor (so a file's earlier text is stored before
  it is overwritten: a process killed at any point leaves a checkpoint for every file it
  changed) and once a command's changes are all told.
- :meth:`TurnJournal.commit_later` queues that write without waiting: a file tool calls it
  after its change, so the turn goes on while the ``after`` note is written. Notes told while
  a write waits in the worker's queue join it (a group commit): the next file's earlier text
  and this file's ``after`` note are usually one transaction.

Each write is one transaction, so the checkpoint set on disk is always a prefix of the notes:
a row never lacks its blob. An ``after`` note lost to a kill leaves the row's earlier digest,
so a rewind reports that file as a conflict rather than overwriting it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

from relavium_lsp.store import file_checkpoints as checkpoints
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.file_checkpoints import FileNote
from relavium_lsp.store.sessions import SessionStore

_log = logging.getLogger(__name__)


class TurnJournal:
    """The checkpoints of one turn (the turn started by user message ``user_sequence``)."""

    def __init__(self, store: AsyncSessionStore, session_id: str, user_sequence: int) -> None:
        self._store = store
        self._session_id = session_id
        self._user_sequence = user_sequence
        self._kept: set[str] = set()  # paths this turn already has a before-note of
        # Shared with the worker thread, which takes the notes when a queued write starts.
        self._lock = threading.Lock()
        self._pending: list[FileNote] = []
        self._queued: asyncio.Future[int] | None = None  # a write that has not started yet

    @property
    def changed_files(self) -> bool:
        """Whether a tool of this turn has begun changing a file (then the turn is kept, §2.2)."""
        return bool(self._kept)

    def before_change(self, path: Path, text: str | None) -> None:
        """Keep what ``path`` holds now, the first time this turn changes it."""
        key = str(path)
        if key in self._kept:
            return
        self._kept.add(key)
        with self._lock:
            self._pending.append(FileNote("before", key, text))

    def after_change(self, path: Path, text: str | None) -> None:
        """Note what the agent left in ``path``."""
        with self._lock:
            self._pending.append(FileNote("after", str(path), text))

    def commit_later(self) -> None:
        """Queue a write of the notes so far without waiting for it."""
        self._queue()

    async def commit(self) -> None:
        """Write every note told so far; returns once they are committed."""
        # Shielded: the write is shared with later callers, so one caller's cancellation
        # must not cancel the future they all wait for.
        await asyncio.shield(self._queue())

    def _queue(self) -> asyncio.Future[int]:
        """The write that will take the pending notes: the queued one, else a new one.

        A queued write takes the notes when it *starts*, and the worker runs calls in order, so
        waiting for it also waits for every earlier write of this journal.
        """
        with self._lock:
            if self._queued is not None:
                return self._queued
            queued = self._store.submit(self._write)
            self._queued = queued
        queued.add_done_callback(self._written)
        return queued

    def _write(self, store: SessionStore) -> int:
        """On the worker thread: take the pending notes and write them in one transaction."""
        with self._lock:
            notes, self._pending = self._pending, []
            self._queued = None
        try:
            return checkpoints.record_changes(
                store.connection, self._session_id, self._user_sequence, notes
            )
        except BaseException:
            with self._lock:  # back in front, in order: the next write retries them
                self._pending[:0] = notes
            raise

    def _written(self, done: asyncio.Future[int]) -> None:
        if done.cancelled():
            return
        error = done.exception()  # retrieved here, so a background write never goes unseen
        if error is not None:
            _log.warning(
                "writing file checkpoints of session %s failed (retried with the next): %s",
                self._session_id,
                error,
            )
