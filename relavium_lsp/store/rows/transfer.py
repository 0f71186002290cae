"""Moving whole sessions in and out: import, fork, and a consistent export snapshot.

Each writer is one ``BEGIN IMMEDIATE`` transaction, so a failure part-way (a duplicate id,
a bad sequence, the process dying) leaves nothing behind: no row, no message, no index
entry. Derived columns — plain text, token estimates, running totals, the message count and
list preview — are computed here exactly as :func:`~relavium_lsp.store.rows.messages.
append_message` computes them, so an imported or forked session is indistinguishable from
one that grew message by message.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from relavium_lsp.contracts.base import compact_json
from relavium_lsp.contracts.content import estimate_tokens, plain_text
from relavium_lsp.contracts.events import StampedEvent
from relavium_lsp.contracts.session import (
    AGENT_AUTHORED_ROLES,
    AgentSessionRecord,
    CompactionMarker,
    ForkOrigin,
    HandoffRecord,
    InterruptionMarker,
    RolledBackTurn,
    SessionMessage,
)
from relavium_lsp.errors import InvalidInput, StoreError
from relavium_lsp.store.db.connection import Connection, read_snapshot, write_transaction
from relavium_lsp.store.models import (
    SESSION_COLUMNS,
    SESSION_PLACEHOLDERS,
    durable_content,
    json_column,
    preview_of,
    session_from_row,
    session_to_row,
)
from relavium_lsp.store.rows import event_log
from relavium_lsp.store.rows.handoffs import insert_handoff
from relavium_lsp.store.rows.messages import iter_messages, require_session
from relavium_lsp.store.rows.model_choice import copy_model_choice

_INSERT_MESSAGE = (
    "INSERT INTO session_messages (id, session_id, sequence_number, role, content, model_id,"
    " compaction, interruption, plain_text, token_estimate, visible_ordinal,"
    " cumulative_tokens, rolled_back, timestamp, token_usage, cost_microcents,"
    " parent_message_id, agent_slug) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_BATCH = 512


def import_session(
    connection: Connection,
    record: AgentSessionRecord,
    messages: Sequence[SessionMessage],
    *,
    rolled_back: Sequence[RolledBackTurn] = (),
    handoffs: Sequence[HandoffRecord] = (),
    events: Sequence[StampedEvent] = (),
) -> None:
    """Create ``record`` with ``messages`` exactly as given (ids, sequence numbers, times).

    ``message_count`` and ``last_message_preview`` are derived from ``messages``; every other
    field of the row is taken from ``record``. ``rolled_back`` turns are stored hidden, as a
    rollback leaves them; ``handoffs`` and ``events`` (numbered, stamped) as given.
    """
    hidden = [message for turn in rolled_back for message in turn.messages]
    _check_messages(record.id, messages)
    _check_messages(record.id, sorted(hidden, key=lambda m: m.sequence_number))
    if {m.sequence_number for m in hidden} & {m.sequence_number for m in messages}:
        raise StoreError("a rolled-back message reuses a visible sequence number")
    with write_transaction(connection):
        _insert_session(connection, record, messages)
        _insert_messages(connection, messages, record.agent_slug, hidden=hidden)
        for handoff in handoffs:
            insert_handoff(connection, handoff.model_copy(update={"session_id": record.id}))
        event_log.insert(connection, events)


def fork_session(
    connection: Connection, source_id: str, at_sequence: int, new_record: AgentSessionRecord
) -> int:
    """Create ``new_record`` holding copies of the source's visible messages ≤ ``at_sequence``.

    Copies get new ids and the new session id; sequence numbers, content and timestamps are
    kept (so compaction boundaries still point at the right messages). ``turn_count`` is the
    number of user messages copied. Returns how many messages were copied.
    """
    with write_transaction(connection):
        require_session(connection, source_id)
        visible = connection.execute(
            "SELECT 1 FROM session_messages WHERE session_id = ? AND sequence_number = ?"
            " AND rolled_back = 0",
            (source_id, at_sequence),
        ).fetchone()
        if visible is None:
            raise InvalidInput(
                f"message {at_sequence} is not a visible message of session {source_id}; "
                "fork at the sequence number of a message in its transcript"
            )
        originals = [
            message
            for message in iter_messages(connection, source_id)
            if message.sequence_number <= at_sequence
        ]
        # Copies get new ids; their threading follows them (a parent outside the copy is
        # dropped rather than pointing into another session).
        new_ids = {message.id: str(uuid.uuid4()) for message in originals}
        copies = [
            message.model_copy(
                update={
                    "id": new_ids[message.id],
                    "session_id": new_record.id,
                    "parent_message_id": new_ids.get(message.parent_message_id or ""),
                }
            )
            for message in originals
        ]
        origin = ForkOrigin(
            session_id=source_id,
            message_id=originals[-1].id if originals else None,
            sequence_number=at_sequence,
        )
        new_record = new_record.model_copy(update={"forked_from": origin})
        turns = sum(1 for message in copies if message.role == "user")
        _insert_session(connection, new_record.model_copy(update={"turn_count": turns}), copies)
        _insert_messages(connection, copies, new_record.agent_slug)
        copy_model_choice(connection, source_id, new_record.id)  # a retry asks the same model
    return len(copies)


def export_snapshot(
    connection: Connection, session_id: str
) -> tuple[AgentSessionRecord, list[SessionMessage]] | None:
    """The row and every visible message, read in one snapshot (``None`` if not found)."""
    with read_snapshot(connection):
        row = connection.execute(
            f"SELECT {SESSION_COLUMNS} FROM agent_sessions"  # noqa: S608
            " WHERE id = ? AND deleted_at IS NULL",
            (session_id,),
        ).fetchone()
        if row is None:
            return None
        return session_from_row(row), list(iter_messages(connection, session_id))


def _check_messages(session_id: str, messages: Sequence[SessionMessage]) -> None:
    previous = 0
    for message in messages:
        if message.session_id != session_id:
            raise StoreError(
                f"message {message.sequence_number} belongs to another session; nothing "
                "was imported"
            )
        if message.sequence_number <= previous:
            raise StoreError(
                f"message sequence numbers must increase ({message.sequence_number} after "
                f"{previous}); nothing was imported"
            )
        previous = message.sequence_number


def _insert_session(
    connection: Connection, record: AgentSessionRecord, messages: Sequence[SessionMessage]
) -> None:
    exists = connection.execute(
        "SELECT 1 FROM agent_sessions WHERE id = ?", (record.id,)
    ).fetchone()
    if exists is not None:
        raise StoreError(f"a session with id {record.id!r} already exists")
    row = record.model_copy(
        update={
            "message_count": len(messages),
            "last_message_preview": _newest_preview(messages),
        }
    )
    connection.execute(
        f"INSERT INTO agent_sessions ({SESSION_COLUMNS}, working_dir)"  # noqa: S608
        f" VALUES ({SESSION_PLACEHOLDERS})",
        session_to_row(row),
    )


def _newest_preview(messages: Sequence[SessionMessage]) -> str | None:
    for message in reversed(messages):
        if message.role in ("user", "assistant"):
            preview = preview_of(message.content)
            if preview is not None:
                return preview
    return None


def _insert_messages(
    connection: Connection,
    messages: Sequence[SessionMessage],
    agent_slug: str,
    *,
    hidden: Sequence[SessionMessage] = (),
) -> None:
    """Insert whole messages; an assistant or tool row without an author is ``agent_slug``'s.

    ``hidden`` rows (rolled-back turns) go in flagged, with the running totals they had when
    they were appended: counted from the visible rows before them, never moving those on.
    """
    hidden_ids = {message.id for message in hidden}
    ordinal, cumulative = 0, 0
    hidden_ordinal: int | None = None
    hidden_cumulative = 0
    rows: list[tuple[Any, ...]] = []
    for message in sorted([*messages, *hidden], key=lambda m: m.sequence_number):
        parts, content_json = durable_content(message.content)
        tokens = estimate_tokens(parts)
        if message.id in hidden_ids:
            if hidden_ordinal is None:  # the first row of a rolled-back turn
                hidden_ordinal, hidden_cumulative = ordinal, cumulative
            hidden_ordinal += 1
            hidden_cumulative += tokens
            row_ordinal, row_cumulative = hidden_ordinal, hidden_cumulative
        else:
            hidden_ordinal = None
            ordinal += 1
            cumulative += tokens
            row_ordinal, row_cumulative = ordinal, cumulative
        rows.append(
            (
                message.id,
                message.session_id,
                message.sequence_number,
                message.role,
                content_json,
                message.model_id,
                _marker(message.compaction),
                _marker(message.interruption),
                plain_text(parts),
                tokens,
                row_ordinal,
                row_cumulative,
                int(message.id in hidden_ids),
                message.timestamp,
                json_column(message.token_usage),
                message.cost_microcents,
                message.parent_message_id,
                _author(message, agent_slug),
            )
        )
        if len(rows) >= _BATCH:
            _flush(connection, rows)
    _flush(connection, rows)
    if messages:
        # One statement indexes every new visible row: the FTS rowid is the message's own.
        connection.execute(
            "INSERT INTO session_messages_fts (rowid, plain_text, session_id)"
            " SELECT message_rowid, plain_text, session_id FROM session_messages"
            " WHERE session_id = ? AND rolled_back = 0",
            (messages[0].session_id,),
        )


def _author(message: SessionMessage, session_agent: str) -> str | None:
    if message.role in AGENT_AUTHORED_ROLES and message.agent_slug is None:
        return session_agent  # older files and rows named no author (migration 15)
    return None if message.role == "system" else message.agent_slug


def _flush(connection: Connection, rows: list[tuple[Any, ...]]) -> None:
    if not rows:
        return
    try:
        connection.executemany(_INSERT_MESSAGE, rows)
    except Exception as error:
        if "UNIQUE" in str(error):
            raise StoreError(
                "a message id in the import already exists in this database; nothing was imported"
            ) from None
        raise
    rows.clear()


def _marker(marker: CompactionMarker | InterruptionMarker | None) -> str | None:
    return None if marker is None else compact_json(marker.model_dump(mode="json", by_alias=True))
