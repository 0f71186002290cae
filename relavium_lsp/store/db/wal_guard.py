"""Noticing that the write-ahead log was deleted or replaced under us (issue 16).

In WAL mode a commit is durable once it is in the ``-wal`` file; the database file gets it
at the next checkpoint. If someone deletes ``history.db-wal`` while the server runs, SQLite
keeps writing into the deleted file through its open descriptor — until the process dies,
when every commit not yet checkpointed is gone without a word. :class:`LogGuard` remembers
the log's identity (device, inode); the store checks it after each call and on a timer, and
on a change checkpoints at once (the deleted file is still readable through the descriptor)
and reopens, so SQLite creates a fresh log at the real path.
"""

from __future__ import annotations

import os
from pathlib import Path

Identity = tuple[int, int]


def log_identity(path: Path) -> Identity | None:
    """``(device, inode)`` of the file at ``path``, or None when there is none."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_dev, status.st_ino


class LogGuard:
    """Tells when the file at a log path stopped being the one the connection writes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._identity: Identity | None = None
        self.rearm()

    def change(self) -> str | None:
        """``"deleted"`` or ``"replaced"`` since the last look, else None (and remember)."""
        try:
            current = log_identity(self.path)
        except OSError:  # cannot look (permissions?): nothing to conclude from that
            return None
        if current == self._identity:
            return None
        if self._identity is None:  # SQLite created the log since (or recreated it after a
            self._identity = current  # clean close); that is the file it writes to now
            return None
        return "deleted" if current is None else "replaced"

    def rearm(self) -> None:
        """Take the log at the path now as the connection's own (after a reopen)."""
        try:
            self._identity = log_identity(self.path)
        except OSError:
            self._identity = None
