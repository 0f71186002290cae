"""Handoff records, their audit rows and the spend of delegated children (§2.5)."""

from __future__ import annotations

import json
import uuid
from typing import Literal

from relavium_lsp.contracts.delegation import HandoffInputFilter
from relavium_lsp.contracts.peers import HandoffAuditRecord
from relavium_lsp.contracts.session import HandoffRecord
from relavium_lsp.store.db.connection import Connection, write_transaction
from relavium_lsp.store.models import utc_timestamp
from relavium_lsp.store.rows.messages import require_session

_COLUMNS = (
    "id, session_id, child_session_id, from_agent, to_agent, reason, sequence_number, call_id,"
    " created_at, cost_cap_microcents, input_filter, context_messages"
)
_AUDIT_COLUMNS = "id, session_id, handoff_id, child_session_id, action, detail, created_at"
AuditAction = Literal["resumed", "replayed"]
# What every session nested under one (children, their children, …) spent.
_DESCENDANTS_COST = (
    "WITH RECURSIVE family(id) AS (SELECT id FROM agent_sessions WHERE parent_session_id = ?"
    " UNION SELECT agent_sessions.id FROM agent_sessions JOIN family"
    " ON agent_sessions.parent_session_id = family.id)"
    " SELECT COALESCE(SUM(total_cost_microcents), 0) FROM agent_sessions"
    " WHERE id IN (SELECT id FROM family)"
)


def record_handoff(
    connection: Connection,
    *,
    session_id: str,
    child_session_id: str | None,
    from_agent: str,
    to_agent: str,
    reason: str,
    sequence_number: int,
    call_id: str | None,
    cost_cap_microcents: int | None = None,
    input_filter: HandoffInputFilter | None = None,
    context_messages: int | None = None,
) -> HandoffRecord:
    """Store one handoff of ``session_id`` (with the child's cap and input filter)."""
    record = HandoffRecord(
        id=str(uuid.uuid4()),
        session_id=session_id,
        child_session_id=child_session_id,
        from_agent=from_agent,
        to_agent=to_agent,
        reason=reason,
        sequence_number=sequence_number,
        call_id=call_id,
        created_at=utc_timestamp(),
        cost_cap_microcents=cost_cap_microcents,
        input_filter=input_filter,
        context_messages=context_messages,
    )
    with write_transaction(connection):
        require_session(connection, session_id)
        insert_handoff(connection, record)
    return record


def insert_handoff(connection: Connection, record: HandoffRecord) -> None:
    """Write one handoff row as given (inside the caller's transaction; imports keep ids)."""
    input_filter = record.input_filter
    connection.execute(
        f"INSERT INTO session_handoffs ({_COLUMNS})"  # noqa: S608 - constant columns
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record.id,
            record.session_id,
            record.child_session_id,
            record.from_agent,
            record.to_agent,
            record.reason,
            record.sequence_number,
            record.call_id,
            record.created_at,
            record.cost_cap_microcents,
            None if input_filter is None else json.dumps(input_filter.to_wire()),
            record.context_messages,
        ),
    )


def list_handoffs(connection: Connection, session_id: str) -> list[HandoffRecord]:
    """The handoffs a session made, oldest first."""
    rows = connection.execute(
        f"SELECT {_COLUMNS} FROM session_handoffs WHERE session_id = ?"  # noqa: S608
        " ORDER BY sequence_number, created_at, rowid",
        (session_id,),
    ).fetchall()
    return [_handoff(row) for row in rows]


def child_handoff(connection: Connection, child_session_id: str) -> HandoffRecord | None:
    """The handoff that started a delegated child session (``None`` for any other session).

    An imported transcript's copy of a handoff names the same child: the row written first
    (the delegation itself) is the one that started it.
    """
    row = connection.execute(
        f"SELECT {_COLUMNS} FROM session_handoffs WHERE child_session_id = ?"  # noqa: S608
        " ORDER BY created_at, rowid LIMIT 1",
        (child_session_id,),
    ).fetchone()
    return None if row is None else _handoff(row)


def _handoff(row: tuple[object, ...]) -> HandoffRecord:
    names = [name.strip() for name in _COLUMNS.split(",")]
    values = dict(zip(names, row, strict=True))
    raw_filter = values.pop("input_filter")
    return HandoffRecord.model_validate(
        {
            **values,
            "input_filter": None if raw_filter is None else json.loads(str(raw_filter)),
        }
    )


def record_audit(
    connection: Connection,
    handoff: HandoffRecord,
    action: AuditAction,
    detail: str | None = None,
) -> HandoffAuditRecord:
    """Record a later use of a handoff: its child resumed in a new process, or a replay."""
    record = HandoffAuditRecord(
        id=str(uuid.uuid4()),
        session_id=handoff.session_id,
        handoff_id=handoff.id,
        child_session_id=handoff.child_session_id,
        action=action,
        detail=detail,
        created_at=utc_timestamp(),
    )
    with write_transaction(connection):
        connection.execute(
            f"INSERT INTO session_handoff_audit ({_AUDIT_COLUMNS})"  # noqa: S608
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                record.id,
                record.session_id,
                record.handoff_id,
                record.child_session_id,
                record.action,
                record.detail,
                record.created_at,
            ),
        )
    return record


def list_audit(connection: Connection, session_id: str) -> list[HandoffAuditRecord]:
    """Audit rows of the handoffs a session made or was started by, oldest first."""
    rows = connection.execute(
        f"SELECT {_AUDIT_COLUMNS} FROM session_handoff_audit"  # noqa: S608
        " WHERE session_id = ? OR child_session_id = ? ORDER BY created_at, rowid",
        (session_id, session_id),
    ).fetchall()
    names = [name.strip() for name in _AUDIT_COLUMNS.split(",")]
    return [HandoffAuditRecord.model_validate(dict(zip(names, row, strict=True))) for row in rows]


def descendants_cost(connection: Connection, session_id: str) -> int:
    """What every session nested under ``session_id`` has spent, in micro-cents."""
    row = connection.execute(_DESCENDANTS_COST, (session_id,)).fetchone()
    return int(row[0])


def depth(connection: Connection, session_id: str) -> int:
    """How many ancestors a session has (0 for a session nobody delegated to)."""
    row = connection.execute(
        "WITH RECURSIVE chain(id, parent, level) AS ("
        " SELECT id, parent_session_id, 0 FROM agent_sessions WHERE id = ?"
        " UNION ALL SELECT a.id, a.parent_session_id, chain.level + 1 FROM agent_sessions a"
        " JOIN chain ON a.id = chain.parent WHERE chain.level < 64)"
        " SELECT COALESCE(MAX(level), 0) FROM chain",
        (session_id,),
    ).fetchone()
    return int(row[0])
