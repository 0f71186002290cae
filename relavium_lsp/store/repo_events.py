"""The session repository, events part: the durable event log and cross-process change marks.

Mixed into ``SessionStore``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from relavium_lsp.contracts.events import EVENT_PAYLOAD_ADAPTER, EventPayload, StampedEvent
from relavium_lsp.store import messages
from relavium_lsp.store.db import relaxed_durability, write_transaction
from relavium_lsp.store.models import dump_json, utc_timestamp
from relavium_lsp.store.repo_base import RepositoryBase


class EventRows(RepositoryBase):
    """The event log and change watching (part of ``SessionStore``)."""

    # -- events -----------------------------------------------------------------------------

    def append_events(
        self, session_id: str, payloads: Sequence[EventPayload]
    ) -> list[StampedEvent]:
        """Stamp a batch with the next sequence numbers and one timestamp, in one commit."""
        if not payloads:
            return []
        now = utc_timestamp()
        with relaxed_durability(self._connection), write_transaction(self._connection):
            messages.require_session(self._connection, session_id)
            last = self.last_event_sequence(session_id)
            stamped = [
                StampedEvent(
                    session_id=session_id,
                    sequence_number=last + offset,
                    timestamp=now,
                    payload=payload,
                )
                for offset, payload in enumerate(payloads, start=1)
            ]
            self._connection.executemany(
                "INSERT INTO session_events (session_id, sequence_number, type, timestamp,"
                " payload) VALUES (?, ?, ?, ?, ?)",
                [
                    (
                        session_id,
                        event.sequence_number,
                        event.payload.type,
                        now,
                        dump_json(event.payload.model_dump(mode="json", by_alias=True)),
                    )
                    for event in stamped
                ],
            )
        return stamped

    def events_after(
        self, session_id: str, after_sequence: int, limit: int = 1000
    ) -> list[StampedEvent]:
        """Events with ``sequence_number > after_sequence`` in order (at most ``limit``)."""
        rows = self._connection.execute(
            "SELECT sequence_number, timestamp, payload FROM session_events"
            " WHERE session_id = ? AND sequence_number > ? ORDER BY sequence_number LIMIT ?",
            (session_id, after_sequence, max(1, limit)),
        ).fetchall()
        return [
            StampedEvent(
                session_id=session_id,
                sequence_number=row[0],
                timestamp=row[1],
                payload=EVENT_PAYLOAD_ADAPTER.validate_python(json.loads(row[2])),
            )
            for row in rows
        ]

    def last_event_sequence(self, session_id: str) -> int:
        """The newest event's sequence number (0 when there is none)."""
        row = self._connection.execute(
            "SELECT COALESCE(MAX(sequence_number), 0) FROM session_events WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return int(row[0])

    # -- watching other processes (docs/design.md §3.1) ------------------------------------

    def change_marks(self) -> tuple[int, int]:
        """``(data_version, newest session-change seq)``: cheap marks of what changed.

        ``PRAGMA data_version`` moves when *another* connection commits; the change log's
        newest sequence moves with every list-visible change, ours included.
        """
        version = self._connection.execute("PRAGMA data_version").fetchone()[0]
        newest = self._connection.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM session_changes"
        ).fetchone()[0]
        return int(version), int(newest)

    def newest_event_sequences(self, session_ids: Sequence[str]) -> dict[str, int]:
        """The newest event sequence of each of these sessions (those with events)."""
        newest: dict[str, int] = {}
        for start in range(0, len(session_ids), 500):
            chunk = list(session_ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            rows = self._connection.execute(
                "SELECT session_id, MAX(sequence_number) FROM session_events"  # noqa: S608
                f" WHERE session_id IN ({marks}) GROUP BY session_id",
                chunk,
            ).fetchall()
            newest.update((str(row[0]), int(row[1])) for row in rows)
        return newest

    def session_changes_after(self, seq: int, limit: int = 1000) -> list[tuple[int, str, str]]:
        """``(seq, session id, kind)`` of list-visible changes after ``seq``, oldest first."""
        rows = self._connection.execute(
            "SELECT seq, session_id, kind FROM session_changes WHERE seq > ? ORDER BY seq LIMIT ?",
            (seq, max(1, limit)),
        ).fetchall()
        return [(int(row[0]), str(row[1]), str(row[2])) for row in rows]

    def prune_session_changes(self, keep: int = 1000) -> None:
        """Forget all but the newest ``keep`` changes (watchers only read the newest)."""
        row = self._connection.execute(
            "SELECT COALESCE(MIN(seq), 0), COALESCE(MAX(seq), 0) FROM session_changes"
        ).fetchone()
        if int(row[1]) - int(row[0]) < 2 * keep:
            return  # the common case: no write lock
        with write_transaction(self._connection):
            self._connection.execute(
                "DELETE FROM session_changes"
                " WHERE seq <= (SELECT MAX(seq) FROM session_changes) - ?",
                (keep,),
            )
