"""The session repository: one synchronous connection, one method per question the engine asks.

It is deliberately synchronous and not thread-safe; :class:`~relavium_lsp.store.async_store.
AsyncSessionStore` confines it to one worker thread for the event loop. Several *processes*
may each hold their own store on the same file: every write that allocates a sequence number
runs inside ``BEGIN IMMEDIATE``.

Conventions: methods that change something raise :class:`~relavium_lsp.errors.SessionNotFound`
for an unknown (or soft-deleted) session; getters return ``None`` or empty results.

The methods live in mixins by what they touch: ``repo_sessions`` (session rows, forks,
handoffs), ``repo_messages`` (the transcript), ``repo_turns`` (turns and their leases),
``repo_costs`` (spend) and ``repo_events`` (the event log, change marks); this class adds
opening, closing, maintenance and artifacts.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from relavium_lsp.store.db.connection import (
    Connection,
    Synchronous,
    open_database,
    write_transaction,
)
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.db.migrations import migrate
from relavium_lsp.store.models import SessionCost, SessionPage, utc_timestamp
from relavium_lsp.store.repo_costs import CostRows
from relavium_lsp.store.repo_events import EventRows
from relavium_lsp.store.repo_turns import TurnRows
from relavium_lsp.store.rows import messages

__all__ = ["SessionCost", "SessionPage", "SessionStore"]


class SessionStore(TurnRows, CostRows, EventRows):
    """Sessions, messages, costs, events and artifacts in one history database."""

    @classmethod
    def open(
        cls, path: Path, key: DbKey, *, synchronous: Synchronous | None = None
    ) -> SessionStore:
        """Open (creating and migrating as needed) the encrypted database at ``path``."""
        connection = open_database(path, key, synchronous=synchronous)
        try:
            migrate(connection)
        except BaseException:
            connection.close()
            raise
        return cls(connection)

    @property
    def connection(self) -> Connection:
        """The underlying connection (for diagnostics; the store owns it)."""
        return self._connection

    def close(self) -> None:
        """Close the connection; the store cannot be used afterwards."""
        self._connection.close()

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the database file (without blocking other writers).

        The engine calls it between turns: SQLite would otherwise checkpoint inside whichever
        commit crosses the WAL limit, and that commit's fsyncs would stall a token stream.
        """
        self._connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def check_integrity(self) -> list[str]:
        """Problems found by SQLite and by FTS5's own check: ``["ok"]`` for a healthy file."""
        problems = [str(row[0]) for row in self._connection.execute("PRAGMA integrity_check")]
        try:
            # rank = 1 also compares the index with its content (the visible messages).
            self._connection.execute(
                "INSERT INTO session_messages_fts (session_messages_fts, rank)"
                " VALUES ('integrity-check', 1)"
            )
        except Exception as error:  # sqlcipher3 and sqlite3 each raise their own DatabaseError
            problems = [p for p in problems if p != "ok"] + [f"full-text index: {error}"]
        return problems

    # -- artifacts --------------------------------------------------------------------------

    def save_artifact(self, session_id: str, call_id: str, text: str) -> str:
        """Keep a tool's full output; returns the artifact id."""
        artifact_id = str(uuid.uuid4())
        with write_transaction(self._connection):
            messages.require_session(self._connection, session_id)
            self._connection.execute(
                "INSERT INTO session_artifacts (id, session_id, call_id, text, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (artifact_id, session_id, call_id, text, utc_timestamp()),
            )
        return artifact_id

    def load_artifact(self, session_id: str, artifact_id: str) -> str | None:
        """A stored artifact of this session (another session's id yields ``None``)."""
        row = self._connection.execute(
            "SELECT text FROM session_artifacts WHERE id = ? AND session_id = ?",
            (artifact_id, session_id),
        ).fetchone()
        return None if row is None else str(row[0])
