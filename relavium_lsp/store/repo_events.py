"""The session repository, events part: the durable event log, its inbox, change marks.

Mixed into ``SessionStore``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from relavium_lsp.contracts.events import EVENT_PAYLOAD_ADAPTER, EventPayload, StampedEvent
from relavium_lsp.store.db.connection import relaxed_durability, write_transaction
from relavium_lsp.store.models import utc_timestamp
from relavium_lsp.store.repo_base import RepositoryBase
from relavium_lsp.store.rows import event_log, leases, messages

_log = logging.getLogger(__name__)


class EventRows(RepositoryBase):
    """The event log and change watching (part of ``SessionStore``)."""

    # -- events -----------------------------------------------------------------------------

    def append_events(
        self,
        session_id: str,
        payloads: Sequence[EventPayload],
        *,
        clock: leases.LeaseClock | None = None,
        floor: int = 0,
    ) -> list[StampedEvent]:
        """Stamp a batch with the next sequence numbers and one timestamp, in one commit.

        Events waiting in the session's inbox are folded in first (numbered before
        ``payloads``, returned with them). While another process holds a live lease on the
        session it numbers the events itself: the payloads go to its inbox instead and
        nothing is returned — they arrive through the shared log once the owner has numbered
        them (docs/design.md §3.1). ``clock`` tells a stale lease (taken over here, which
        folds the inbox) from a live one; without it every foreign lease counts as live.
        With no payloads, only the inbox is folded. ``floor``: the highest number this
        process handed out itself (numbered past it, even if its write failed).
        """
        if not payloads and not self._inbox_waiting(session_id):
            return []
        now = utc_timestamp()
        with relaxed_durability(self._connection), write_transaction(self._connection):
            messages.require_session(self._connection, session_id)
            if self._numbered_elsewhere(session_id, clock):
                event_log.put_in_inbox(self._connection, session_id, payloads, now)
                return []
            return event_log.allocate(self._connection, session_id, payloads, now, floor)

    def append_numbered_events(
        self,
        session_id: str,
        events: Sequence[StampedEvent],
        inbox_ids: Sequence[int | None],
        owner_token: str,
        clock: leases.LeaseClock | None = None,
    ) -> int | None:
        """Write events the lease's owner already numbered and delivered, in one commit.

        ``inbox_ids[i]`` is the inbox row ``events[i]`` was folded from (``None``: emitted
        here); those rows are deleted in the same commit, and an event whose row is gone
        (another process folded it after a takeover) is not written twice. Returns how far
        the owner may number now (its reservation, extended in this commit once less than
        half a block is left) when the numbers were kept. ``None`` when the lease is no
        longer ``owner_token``'s (taken over after this process stalled): the events are then
        written the ordinary way (numbered by the database, or into the new owner's inbox)
        so that nothing is lost.
        """
        connection = self._connection
        with relaxed_durability(connection), write_transaction(connection):
            folded = [i for i in inbox_ids if i is not None]
            present = event_log.delete_inbox_rows(connection, folded) if folded else set()
            keep = [
                event
                for event, inbox_id in zip(events, inbox_ids, strict=True)
                if inbox_id is None or inbox_id in present
            ]
            reserved = event_log.reservation(connection, session_id, owner_token)
            if not keep:
                return reserved or None
            used = event_log.numbers_used(connection, session_id)
            if reserved and used < keep[0].sequence_number:
                event_log.insert(connection, keep)
                top = keep[-1].sequence_number
                if reserved - top < event_log.RESERVE_BLOCK // 2:
                    # Off the token's path: the bus keeps numbering meanwhile (§3.1).
                    reserved = (
                        event_log.reserve(
                            connection, session_id, owner_token, top + event_log.RESERVE_BLOCK
                        )
                        or reserved
                    )
                return reserved
            _log.warning(
                "session %s: this process no longer holds the lease; %d event(s) it numbered "
                "are written under the log's own numbers",
                session_id,
                len(keep),
            )
            payloads = [event.payload for event in keep]
            now = utc_timestamp()
            if self._numbered_elsewhere(session_id, clock):
                event_log.put_in_inbox(connection, session_id, payloads, now)
            else:
                event_log.allocate(connection, session_id, payloads, now)
            return None

    def event_log_state(
        self, session_id: str, after_sequence: int | None, inbox_after: int, token: str | None
    ) -> tuple[int, int, list[StampedEvent], list[tuple[int, EventPayload]]]:
        """What a bus claiming a session's numbering needs, read at once (no write lock).

        The highest number given out (the log's newest, or a takeover's floor above it); how
        far the lease under ``token`` may number (0: it is not that lease's); the events
        after ``after_sequence`` (``None``: not wanted); the inbox rows past ``inbox_after``.
        """
        connection = self._connection
        last = event_log.numbers_used(connection, session_id)
        reserved = event_log.reservation(connection, session_id, token)
        missed = (
            []
            if after_sequence is None or after_sequence >= last
            else self.events_after(session_id, after_sequence, last - after_sequence)
        )
        inbox = event_log.read_inbox(connection, session_id, inbox_after)
        return last, reserved, missed, inbox

    def claim_event_numbers(
        self, session_id: str, token: str, after_sequence: int | None, floor: int = 0
    ) -> tuple[int, int, list[StampedEvent], list[tuple[int, EventPayload]]]:
        """Reserve a block of numbers past every number given out, then ``event_log_state``.

        For a bus that numbers again after the database numbered for it (its reservation
        ran out); the reservation stays 0 when the lease is not ``token``'s. ``floor``: the
        highest number the bus handed out (past the log's newest only if a write failed).
        """
        connection = self._connection
        with relaxed_durability(connection), write_transaction(connection):
            used = max(event_log.numbers_used(connection, session_id), floor)
            event_log.reserve(connection, session_id, token, used + event_log.RESERVE_BLOCK)
        return self.event_log_state(session_id, after_sequence, 0, token)

    def read_event_inbox(self, session_id: str, after_id: int) -> list[tuple[int, EventPayload]]:
        """A session's inbox rows past ``after_id``, oldest first (read only)."""
        return event_log.read_inbox(self._connection, session_id, after_id)

    def newest_inbox_ids(self, session_ids: Sequence[str]) -> dict[str, int]:
        """The newest inbox row id of each of these sessions (those with rows waiting)."""
        return event_log.newest_inbox_ids(self._connection, session_ids)

    def _inbox_waiting(self, session_id: str) -> bool:
        row = self._connection.execute(
            "SELECT 1 FROM session_event_inbox WHERE session_id = ? LIMIT 1", (session_id,)
        ).fetchone()
        return row is not None

    def _numbered_elsewhere(self, session_id: str, clock: leases.LeaseClock | None) -> bool:
        """Inside a write transaction: whether another process's live lease numbers events.

        A stale lease is taken over first (as every other write does, §7.1), which folds
        the inbox; this connection's own lease numbers here.
        """
        lease = leases.read_lease(self._connection, session_id)
        if lease is None or lease.owner_token == self._fences.get(session_id):
            return False
        if clock is not None and clock.is_stale(lease):
            leases.take_over(self._connection, lease)
            return False
        return True

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
        return event_log.last_sequence(self._connection, session_id)

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
