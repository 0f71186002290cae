"""Handoff records and the spend of delegated children (§2.5)."""

from __future__ import annotations

import uuid

from relavium_lsp.contracts.session import HandoffRecord
from relavium_lsp.store.db import Connection, write_transaction
from relavium_lsp.store.messages import require_session
from relavium_lsp.store.models import utc_timestamp

_COLUMNS = (
    "id, session_id, child_session_id, from_agent, to_agent, reason, sequence_number, call_id,"
    " created_at"
)
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
) -> HandoffRecord:
    """Store one handoff of ``session_id``."""
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
    )
    with write_transaction(connection):
        require_session(connection, session_id)
        connection.execute(
            f"INSERT INTO session_handoffs ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",  # noqa: S608
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
            ),
        )
    return record


def list_handoffs(connection: Connection, session_id: str) -> list[HandoffRecord]:
    """The handoffs a session made, oldest first."""
    rows = connection.execute(
        f"SELECT {_COLUMNS} FROM session_handoffs WHERE session_id = ?"  # noqa: S608
        " ORDER BY sequence_number, created_at, id",
        (session_id,),
    ).fetchall()
    return [
        HandoffRecord(
            id=row[0],
            session_id=row[1],
            child_session_id=row[2],
            from_agent=row[3],
            to_agent=row[4],
            reason=row[5],
            sequence_number=row[6],
            call_id=row[7],
            created_at=row[8],
        )
        for row in rows
    ]


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
