"""The session repository: one synchronous connection, one method per question the engine asks.

It is deliberately synchronous and not thread-safe; :class:`~relavium_lsp.store.async_store.
AsyncSessionStore` confines it to one worker thread for the event loop. Several *processes*
may each hold their own store on the same file: every write that allocates a sequence number
runs inside ``BEGIN IMMEDIATE``.

Conventions: methods that change something raise :class:`~relavium_lsp.errors.SessionNotFound`
for an unknown (or soft-deleted) session; getters return ``None`` or empty results.

One class, its methods grouped by what they touch (sessions, messages, turns and leases,
spend, the event log, change marks, maintenance, artifacts); the SQL of each table family is
in ``store/rows/``, as free functions over the connection.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from relavium_lsp.contracts.base import compact_json
from relavium_lsp.contracts.content import DurableContentPart, TextPart
from relavium_lsp.contracts.events import EVENT_PAYLOAD_ADAPTER, EventPayload, StampedEvent
from relavium_lsp.contracts.peers import PeerMessage
from relavium_lsp.contracts.session import (
    AgentSessionRecord,
    CompactionMarker,
    DescriptionSource,
    HandoffRecord,
    InterruptionMarker,
    MessageRole,
    RolledBackTurn,
    SessionMessage,
    SessionStatus,
    SessionTotals,
    check_metadata,
)
from relavium_lsp.contracts.session_ops import ArtifactInfo
from relavium_lsp.contracts.usage import TokenUsage
from relavium_lsp.errors import LeaseLost, SessionNotFound, StoreError
from relavium_lsp.store.db.connection import (
    Connection,
    Synchronous,
    open_database,
    relaxed_durability,
    write_transaction,
)
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.db.migrations import migrate
from relavium_lsp.store.models import (
    SESSION_COLUMNS,
    SESSION_PLACEHOLDERS,
    SessionCost,
    SessionPage,
    session_from_row,
    session_to_row,
    utc_timestamp,
)
from relavium_lsp.store.rows import (
    event_log,
    handoffs,
    leases,
    listing,
    messages,
    peer_messages,
    reasoning_signatures,
    rollbacks,
    session_ops,
    transfer,
)
from relavium_lsp.store.rows.messages import DecodedMessages
from relavium_lsp.store.rows.tail_walk import TailWalk

__all__ = ["SessionCost", "SessionPage", "SessionStore"]


# Sessions whose last tail walk this connection keeps to continue from (the newest used).
KNOWN_WALKS = 16
_log = logging.getLogger(__name__)


class SessionStore:
    """Sessions, messages, costs, events and artifacts in one history database."""

    def __init__(self, connection: Connection) -> None:
        """Wrap an open, migrated connection (see :meth:`open`)."""
        self._connection = connection
        # session id → the token of the lease this connection's turn holds on it. While one
        # is held, its message, rollback and cost writes are fenced: each checks, in its own
        # transaction, that the lease is still ours (docs/design.md §7.1).
        self._fences: dict[str, str] = {}
        # What the turns' history tails decoded, for the next turn (rows/messages.py).
        self._decoded = DecodedMessages()
        # session id → this connection's last walk of its history tail (rows/tail_walk.py).
        self._walks: dict[str, TailWalk] = {}

    def _check_fence(self, session_id: str) -> None:
        """Inside a write transaction: refuse if our turn's lease was taken over meanwhile."""
        token = self._fences.get(session_id)
        if token is None:
            return
        lease = leases.read_lease(self._connection, session_id)
        if lease is None or lease.owner_token != token:
            raise LeaseLost(
                f"session {session_id}: another window took this turn over (its heartbeat "
                "stopped for longer than the lease timeout); nothing more was written"
            )

    # -- sessions: rows, forks, import and export, handoffs --------------------------------

    def create_session(self, record: AgentSessionRecord) -> None:
        """Persist a new session row; an existing id is a :class:`StoreError`."""
        with write_transaction(self._connection):
            exists = self._connection.execute(
                "SELECT 1 FROM agent_sessions WHERE id = ?", (record.id,)
            ).fetchone()
            if exists is not None:
                raise StoreError(f"a session with id {record.id!r} already exists")
            self._connection.execute(
                f"INSERT INTO agent_sessions ({SESSION_COLUMNS}, working_dir)"  # noqa: S608
                f" VALUES ({SESSION_PLACEHOLDERS})",
                session_to_row(record),
            )

    def get_session(
        self, session_id: str, *, include_deleted: bool = False
    ) -> AgentSessionRecord | None:
        """The session row, or ``None`` (also for a soft-deleted one unless asked)."""
        row = self._connection.execute(
            f"SELECT {SESSION_COLUMNS} FROM agent_sessions WHERE id = ?",  # noqa: S608
            (session_id,),
        ).fetchone()
        if row is None or (row[17] is not None and not include_deleted):
            return None
        return session_from_row(row)

    def list_sessions(
        self,
        *,
        workspace: str | None = None,
        status: SessionStatus | None = None,
        query: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        deleted: bool = False,
    ) -> SessionPage:
        """Undeleted (or only deleted) sessions, newest first, filters combined, keyset-paged."""
        return listing.list_sessions(
            self._connection,
            workspace=workspace,
            status=status,
            query=query,
            limit=limit,
            cursor=cursor,
            deleted=deleted,
        )

    def set_status(self, session_id: str, status: SessionStatus) -> None:
        """Change the session's status."""
        self._update_session(session_id, "status = ?", (status,))

    def rename_session(self, session_id: str, title: str) -> None:
        """Set the session's title."""
        self._update_session(session_id, "title = ?", (title,))

    def soft_delete_session(
        self, session_id: str, *, clock: leases.LeaseClock | None = None
    ) -> None:
        """Hide the session from lists and getters; nothing is erased.

        With ``clock``: refused (:class:`SessionRunningElsewhere`) while another process holds
        a live lease on it, checked in the same transaction.
        """
        with write_transaction(self._connection):
            if clock is not None:
                leases.refuse_if_leased(self._connection, session_id, clock, "delete")
            self._update_session(session_id, "deleted_at = ?", (utc_timestamp(),))

    def set_description(
        self, session_id: str, description: str | None, source: DescriptionSource | None
    ) -> None:
        """Set (or clear) the session's description and who wrote it."""
        self._update_session(
            session_id,
            "description = ?, description_source = ?",
            (description, None if description is None else source),
        )

    def set_metadata(self, session_id: str, metadata: dict[str, Any] | None) -> None:
        """Replace the session's metadata object (size-checked by the contract)."""
        check_metadata(metadata)
        self._update_session(
            session_id, "metadata = ?", (None if metadata is None else compact_json(metadata),)
        )

    def set_exported_path(self, session_id: str, path: str) -> None:
        """Record where the session was last exported (it stays resumable)."""
        self._update_session(session_id, "exported_workflow_path = ?", (path,))

    def increment_turn_count(self, session_id: str) -> int:
        """Count one more turn; returns the new count."""
        row = self._connection.execute(
            "UPDATE agent_sessions SET turn_count = turn_count + 1, updated_at = ?"
            " WHERE id = ? AND deleted_at IS NULL RETURNING turn_count",
            (utc_timestamp(), session_id),
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session with id {session_id!r}")
        return int(row[0])

    def _update_session(self, session_id: str, assignment: str, values: tuple[object, ...]) -> None:
        cursor = self._connection.execute(
            f"UPDATE agent_sessions SET {assignment}, updated_at = ?"  # noqa: S608
            " WHERE id = ? AND deleted_at IS NULL",
            (*values, utc_timestamp(), session_id),
        )
        if cursor.rowcount == 0:
            raise SessionNotFound(f"no session with id {session_id!r}")

    def import_session(
        self,
        record: AgentSessionRecord,
        imported: Sequence[SessionMessage],
        *,
        rolled_back: Sequence[RolledBackTurn] = (),
        handoffs: Sequence[HandoffRecord] = (),
        events: Sequence[StampedEvent] = (),
    ) -> None:
        """Create a session with its messages as given, in one transaction (all or nothing).

        Rolled-back turns are stored hidden, handoffs and (numbered) events as they are.
        """
        self._walks.clear()  # an id purged and imported again: no earlier walk continues
        transfer.import_session(
            self._connection,
            record,
            imported,
            rolled_back=rolled_back,
            handoffs=handoffs,
            events=events,
        )

    def fork_session(self, source_id: str, at_sequence: int, new_record: AgentSessionRecord) -> int:
        """Copy the visible messages ``<= at_sequence`` into a new session; returns the count."""
        return transfer.fork_session(self._connection, source_id, at_sequence, new_record)

    def export_snapshot(
        self, session_id: str
    ) -> tuple[AgentSessionRecord, list[SessionMessage]] | None:
        """A session's row and visible messages read in one consistent snapshot."""
        return transfer.export_snapshot(self._connection, session_id)

    def restore_session(self, session_id: str) -> None:
        """Undo a soft delete (the session is listed and usable again)."""
        session_ops.restore_session(self._connection, session_id)

    def purge_session(self, session_id: str) -> session_ops.PurgeReport:
        """Erase a session and its delegated children for good (see ``store.session_ops``)."""
        self._walks.clear()
        return session_ops.purge_session(self._connection, session_id)

    def list_artifacts(self, session_id: str) -> list[ArtifactInfo]:
        """The session's stored full tool outputs, oldest first."""
        return session_ops.list_artifacts(self._connection, session_id)

    def record_handoff(
        self,
        session_id: str,
        *,
        child_session_id: str | None,
        from_agent: str,
        to_agent: str,
        reason: str,
        sequence_number: int,
        call_id: str | None,
    ) -> HandoffRecord:
        """Store a handoff (delegation) the session made."""
        return handoffs.record_handoff(
            self._connection,
            session_id=session_id,
            child_session_id=child_session_id,
            from_agent=from_agent,
            to_agent=to_agent,
            reason=reason,
            sequence_number=sequence_number,
            call_id=call_id,
        )

    def list_handoffs(self, session_id: str) -> list[HandoffRecord]:
        """The handoffs a session made, oldest first."""
        return handoffs.list_handoffs(self._connection, session_id)

    def descendants_cost(self, session_id: str) -> int:
        """The spend of every session nested under this one (micro-cents)."""
        return handoffs.descendants_cost(self._connection, session_id)

    def delegation_depth(self, session_id: str) -> int:
        """How many ancestors the session has."""
        return handoffs.depth(self._connection, session_id)

    def rolled_back_turns(self, session_id: str) -> list[RolledBackTurn]:
        """The turns rolled out of the visible transcript (failed or aborted), oldest first."""
        return rollbacks.rolled_back_turns(self._connection, session_id)

    # -- messages: the transcript, fenced by the turn's lease ------------------------------

    def append_message(
        self,
        session_id: str,
        role: MessageRole,
        content: Sequence[DurableContentPart],
        *,
        model_id: str | None = None,
        compaction: CompactionMarker | None = None,
        interruption: InterruptionMarker | None = None,
        token_usage: TokenUsage | None = None,
        cost_microcents: int | None = None,
        parent_message_id: str | None = None,
        agent_slug: str | None = None,
    ) -> SessionMessage:
        """Append one durable message with the next sequence number (one transaction)."""
        with write_transaction(self._connection):
            self._check_fence(session_id)
            return messages.append_message(
                self._connection,
                session_id,
                role,
                content,
                model_id=model_id,
                compaction=compaction,
                interruption=interruption,
                token_usage=token_usage,
                cost_microcents=cost_microcents,
                parent_message_id=parent_message_id,
                agent_slug=agent_slug,
                decode=self._decoded.decode,
            )

    def deliver_peer_message(
        self, message: PeerMessage, to_session_id: str, text: str
    ) -> int | None:
        """Append a ``pending`` delivery to its recipient's transcript; its sequence number.

        One transaction claims the delivery, appends the attributed message and marks it
        delivered, so two processes (or a queued delivery and a reload) never deliver it twice:
        ``None`` when it was no longer pending.
        """
        connection = self._connection
        with write_transaction(connection):
            row = connection.execute(
                "SELECT status FROM peer_deliveries WHERE message_id = ? AND to_session_id = ?",
                (message.id, to_session_id),
            ).fetchone()
            if row is None or row[0] != "pending":
                return None
            stored = self.append_message(
                to_session_id, "user", [TextPart(text=text)], agent_slug=message.from_agent
            )
            peer_messages.update_delivery(
                connection,
                message.id,
                to_session_id,
                "delivered",
                sequence_number=stored.sequence_number,
            )
        return stored.sequence_number

    def keep_reasoning_signatures(self, message_id: str, signatures: list[str | None]) -> None:
        """Keep a message's reasoning signatures (``store/rows/reasoning_signatures.py``)."""
        with write_transaction(self._connection):
            reasoning_signatures.keep_signatures(self._connection, message_id, signatures)

    def reasoning_signatures(self, message_ids: Sequence[str]) -> dict[str, list[str | None]]:
        """The kept reasoning signatures of those messages that have any."""
        return reasoning_signatures.signatures_of(self._connection, message_ids)

    def roll_back_from(self, session_id: str, from_sequence: int) -> int:
        """Hide messages ``>= from_sequence`` (an aborted or failed turn); returns the count."""
        with write_transaction(self._connection):
            self._check_fence(session_id)
            return messages.roll_back_from(self._connection, session_id, from_sequence)

    def load_tail_within_budget(self, session_id: str, token_budget: int) -> list[SessionMessage]:
        """The newest visible messages that fit ``token_budget``, oldest first."""
        return messages.load_tail_within_budget(
            self._connection, session_id, token_budget, self._decoded.decode
        )

    def walk_tail(self, session_id: str, token_budget: int) -> TailWalk:
        """The rows the tail rule visits for ``token_budget``: the tail for any smaller one.

        Continues from this connection's last walk of the session when no other connection
        has committed since (``PRAGMA data_version``, read before the walk so that a commit
        racing it only makes the next walk a full one): then only newer rows are read.
        """
        version = int(self._connection.execute("PRAGMA data_version").fetchone()[0])
        known = self._walks.pop(session_id, None)
        if known is not None and known.data_version != version:
            known = None
        walk = messages.walk_tail(
            self._connection, session_id, token_budget, self._decoded.decode, known
        )
        walk = dataclasses.replace(walk, data_version=version)
        self._walks[session_id] = walk
        while len(self._walks) > KNOWN_WALKS:
            del self._walks[next(iter(self._walks))]
        return walk

    def get_transcript(
        self,
        session_id: str,
        *,
        before_sequence: int | None = None,
        limit: int = 100,
        agent_slug: str | None = None,
    ) -> tuple[list[SessionMessage], bool]:
        """A page of visible messages before ``before_sequence`` (oldest first) and has_more.

        ``agent_slug`` keeps only the messages that agent wrote.
        """
        return messages.get_transcript(
            self._connection,
            session_id,
            before_sequence=before_sequence,
            limit=limit,
            agent_slug=agent_slug,
        )

    def iter_messages(self, session_id: str) -> Iterator[SessionMessage]:
        """All visible messages in order (consume it on the store's thread)."""
        return messages.iter_messages(self._connection, session_id)

    def last_message(self, session_id: str) -> SessionMessage | None:
        """The newest visible message."""
        return messages.last_message(self._connection, session_id)

    def count_tokens_since_boundary(self, session_id: str) -> tuple[int, int]:
        """(messages, estimated tokens) after the newest compaction marker."""
        return messages.count_tokens_since_boundary(self._connection, session_id)

    def newest_marker_holds_view(self, session_id: str) -> bool:
        """Whether the newest compaction marker holds a view a turn compacted into (§2.3)."""
        return messages.newest_marker_holds_view(self._connection, session_id)

    # -- turns and their leases (docs/design.md §7.1) --------------------------------------

    def begin_turn(
        self,
        session_id: str,
        content: Sequence[DurableContentPart],
        *,
        wait_for_disk: bool = True,
        lease: tuple[str, leases.LeaseClock] | None = None,
        author: str | None = None,
    ) -> tuple[SessionMessage, int]:
        """Mark the session streaming, count the turn and append its user message — one commit.

        Returns the user message and the new turn count. With ``wait_for_disk=False`` the
        commit does not wait for its fsync (it is in the write-ahead log, so it survives the
        process being killed); the caller must then call :meth:`sync_log` (the engine does so
        while the model request is already on its way, see ``engine.session``). With
        ``lease`` (token, clock) the turn's lease is taken in the same commit, or the turn is
        refused with :class:`SessionRunningElsewhere`.
        """
        connection = self._connection
        durability = contextlib.nullcontext() if wait_for_disk else relaxed_durability(connection)
        with durability, write_transaction(connection):
            if lease is not None:
                messages.require_session(connection, session_id)
                leases.take_lease(connection, session_id, lease[0], lease[1])
                self._fences[session_id] = lease[0]
            self.set_status(session_id, "streaming")
            turn_count = self.increment_turn_count(session_id)
            message = self.append_message(session_id, "user", content, agent_slug=author)
        return message, turn_count

    def end_turn(
        self,
        session_id: str,
        token: str | None,
        status: SessionStatus = "idle",
        handed_out: int = 0,
    ) -> bool:
        """Release the turn's lease and set the settled status (``idle``/``failed``) — one commit.

        ``False`` (and nothing written) when the lease was no longer ours: another process
        took it over, marked the turn and owns what happens to the session now.
        ``handed_out``: the highest event number the bus gave out under the lease.
        """
        self._fences.pop(session_id, None)
        with write_transaction(self._connection):
            if token is not None and not leases.release_lease(
                self._connection, session_id, token, handed_out
            ):
                return False
            self.set_status(session_id, status)
        return True

    def acquire_lease(self, session_id: str, token: str, clock: leases.LeaseClock) -> None:
        """Hold the session's lease (work other than a turn, e.g. compaction), or refuse."""
        with write_transaction(self._connection):
            messages.require_session(self._connection, session_id)
            leases.take_lease(self._connection, session_id, token, clock)
            self._fences[session_id] = token

    def release_lease(self, session_id: str, token: str, handed_out: int = 0) -> bool:
        """Drop a lease taken with :meth:`acquire_lease` (``handed_out``: see ``end_turn``)."""
        if self._fences.get(session_id) == token:
            del self._fences[session_id]
        with write_transaction(self._connection):
            return leases.release_lease(self._connection, session_id, token, handed_out)

    def renew_lease(self, session_id: str, token: str, now: float) -> bool | None:
        """Heartbeat: ``None`` if the lease is lost, else whether an abort was requested."""
        return leases.renew_lease(self._connection, session_id, token, now)

    def read_lease(self, session_id: str) -> leases.Lease | None:
        """The session's lease row, if a turn holds one."""
        return leases.read_lease(self._connection, session_id)

    def refuse_if_leased(self, session_id: str, clock: leases.LeaseClock, doing: str) -> None:
        """Raise :class:`SessionRunningElsewhere` while another process runs a turn."""
        lease = leases.read_lease(self._connection, session_id)
        if lease is None or lease.owner_token in clock.own_tokens:
            return
        with write_transaction(self._connection):
            leases.refuse_if_leased(self._connection, session_id, clock, doing)

    def request_abort(self, session_id: str) -> leases.Lease | None:
        """Ask the process holding the session's lease to abort its turn."""
        return leases.request_abort(self._connection, session_id)

    def recover_session(self, session_id: str, clock: leases.LeaseClock) -> leases.Lease | None:
        """Settle a turn nobody runs any more; the live lease if another process runs one."""
        return leases.recover_session(self._connection, session_id, clock)

    def mark_inactive(self, touched_before: str) -> list[str]:
        """Mark settled sessions nobody touched since ``touched_before`` inactive (their ids)."""
        return session_ops.mark_inactive(self._connection, touched_before)

    def recover_abandoned(self, clock: leases.LeaseClock) -> list[str]:
        """Settle every session whose turn's owner is gone; returns their ids."""
        return leases.recover_abandoned(self._connection, clock)

    # -- spend -----------------------------------------------------------------------------

    def record_cost(
        self,
        session_id: str,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cost_microcents: int,
        priced: bool,
        *,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> SessionTotals:
        """Add one provider call's spend to ``session_costs`` and the session totals atomically."""
        counts = (
            input_tokens,
            output_tokens,
            cost_microcents,
            cache_read_tokens,
            cache_write_tokens,
        )
        if min(counts) < 0:
            raise ValueError("token counts and costs cannot be negative")
        if cache_read_tokens + cache_write_tokens > input_tokens:
            raise ValueError("cache reads and writes are parts of the input tokens")
        unpriced = 0 if priced else 1
        with write_transaction(self._connection):
            messages.require_session(self._connection, session_id)
            self._connection.execute(
                "INSERT INTO session_costs (session_id, model, input_tokens, output_tokens,"
                " cost_microcents, call_count, unpriced_calls, cache_read_tokens,"
                " cache_write_tokens) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)"
                " ON CONFLICT (session_id, model) DO UPDATE SET"
                " input_tokens = input_tokens + excluded.input_tokens,"
                " output_tokens = output_tokens + excluded.output_tokens,"
                " cost_microcents = cost_microcents + excluded.cost_microcents,"
                " call_count = call_count + 1,"
                " unpriced_calls = unpriced_calls + excluded.unpriced_calls,"
                " cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,"
                " cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens",
                (
                    session_id,
                    model,
                    input_tokens,
                    output_tokens,
                    cost_microcents,
                    unpriced,
                    cache_read_tokens,
                    cache_write_tokens,
                ),
            )
            row = self._connection.execute(
                "UPDATE agent_sessions SET total_input_tokens = total_input_tokens + ?,"
                " total_output_tokens = total_output_tokens + ?,"
                " total_cost_microcents = total_cost_microcents + ? WHERE id = ?"
                " RETURNING total_input_tokens, total_output_tokens, total_cost_microcents",
                (input_tokens, output_tokens, cost_microcents, session_id),
            ).fetchone()
        return SessionTotals(input_tokens=row[0], output_tokens=row[1], cost_microcents=row[2])

    def get_costs(self, session_id: str) -> list[SessionCost]:
        """Per-model spend of a session, ordered by model."""
        rows = self._connection.execute(
            "SELECT model, input_tokens, output_tokens, cost_microcents, call_count,"
            " unpriced_calls, cache_read_tokens, cache_write_tokens FROM session_costs"
            " WHERE session_id = ? ORDER BY model",
            (session_id,),
        ).fetchall()
        return [
            SessionCost(
                model=row[0],
                input_tokens=row[1],
                output_tokens=row[2],
                cost_microcents=row[3],
                call_count=row[4],
                unpriced_calls=row[5],
                cache_read_tokens=row[6],
                cache_write_tokens=row[7],
            )
            for row in rows
        ]

    # -- the event log and its inbox (docs/design.md §3.1) ---------------------------------

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

    # -- opening, closing, maintenance -----------------------------------------------------

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
