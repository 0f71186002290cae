"""Typed things read back from the durable event log: checkpoints, the plan, pending work.

Introspection checkpoints (§2.5) are ``session:checkpoint`` events; nothing else stores them,
so the log is the one record and exports and lists read them from there. The session's
current plan is the newest ``agent:plan_updated`` event: the plan has no table of its own
(``update_plan`` emits an event, the bus persists it before anyone sees it); the read walks
the session's events newest first along the primary key — only resume and export ask, so no
extra index is needed.

What an automatic introspection pass needs to know — is there anything new to introspect — is
read from the log (``session:checkpoint`` and ``session:turn_completed`` events) and the
messages, so every process sharing the database reaches the same answer: the automatic
triggers (``engine/memory/introspection_triggers.py``) ask again under the session's lease,
and a pass another window just recorded leaves nothing to do here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from relavium_lsp.contracts.events import EVENT_PAYLOAD_ADAPTER, SessionCheckpoint, StampedEvent
from relavium_lsp.contracts.plan import AgentPlanUpdated
from relavium_lsp.store.db.connection import Connection

CHECKPOINT_EVENT = "session:checkpoint"


def latest_checkpoint(connection: Connection, session_id: str) -> SessionCheckpoint | None:
    """The session's newest checkpoint, or ``None``."""
    row = connection.execute(
        "SELECT payload FROM session_events WHERE session_id = ? AND type = ?"
        " ORDER BY sequence_number DESC LIMIT 1",
        (session_id, CHECKPOINT_EVENT),
    ).fetchone()
    return None if row is None else SessionCheckpoint.model_validate(json.loads(row[0]))


def list_checkpoints(connection: Connection, session_id: str) -> list[SessionCheckpoint]:
    """Every checkpoint of the session, oldest first."""
    rows = connection.execute(
        "SELECT payload FROM session_events WHERE session_id = ? AND type = ?"
        " ORDER BY sequence_number",
        (session_id, CHECKPOINT_EVENT),
    ).fetchall()
    return [SessionCheckpoint.model_validate(json.loads(row[0])) for row in rows]


PLAN_EVENT = "agent:plan_updated"


def latest_plan(connection: Connection, session_id: str) -> AgentPlanUpdated | None:
    """The session's newest plan event, or ``None`` when the agent never made a plan."""
    row = connection.execute(
        "SELECT payload FROM session_events WHERE session_id = ? AND type = ?"
        " ORDER BY sequence_number DESC LIMIT 1",
        (session_id, PLAN_EVENT),
    ).fetchone()
    if row is None:
        return None
    return AgentPlanUpdated.model_validate(json.loads(row[0]))


def timeline_events(connection: Connection, session_id: str) -> list[StampedEvent]:
    """The session's checkpoints and plan writes as logged (numbers and times), oldest first.

    What a JSONL export places by time (``checkpoint`` and ``progress-write`` records).
    """
    rows = connection.execute(
        "SELECT sequence_number, timestamp, payload FROM session_events"
        " WHERE session_id = ? AND type IN (?, ?) ORDER BY sequence_number",
        (session_id, CHECKPOINT_EVENT, PLAN_EVENT),
    ).fetchall()
    return [
        StampedEvent(
            session_id=session_id,
            sequence_number=int(row[0]),
            timestamp=str(row[1]),
            payload=EVENT_PAYLOAD_ADAPTER.validate_json(row[2]),
        )
        for row in rows
    ]


TURN_COMPLETED_EVENT = "session:turn_completed"


@dataclass(frozen=True)
class PendingWork:
    """What happened in a session since its newest checkpoint."""

    fresh_messages: int  # visible messages after the checkpoint's ``throughSequence``
    turns: int  # turns that settled after the checkpoint event
    turn_count: int  # the session's turns in all (its max_turns counts these)


def pending_work(connection: Connection, session_id: str) -> PendingWork:
    """The session's messages and turns since its newest checkpoint (all of them if none)."""
    row = connection.execute(
        "SELECT sequence_number, payload FROM session_events WHERE session_id = ? AND type = ?"
        " ORDER BY sequence_number DESC LIMIT 1",
        (session_id, CHECKPOINT_EVENT),
    ).fetchone()
    event_sequence, through = 0, 0
    if row is not None:
        event_sequence = int(row[0])
        through = int(json.loads(row[1]).get("throughSequence", 0))
    fresh = connection.execute(
        "SELECT COUNT(*) FROM session_messages"
        " WHERE session_id = ? AND rolled_back = 0 AND sequence_number > ?",
        (session_id, through),
    ).fetchone()
    turns = connection.execute(
        "SELECT COUNT(*) FROM session_events"
        " WHERE session_id = ? AND type = ? AND sequence_number > ?",
        (session_id, TURN_COMPLETED_EVENT, event_sequence),
    ).fetchone()
    total = connection.execute(
        "SELECT turn_count FROM agent_sessions WHERE id = ?", (session_id,)
    ).fetchone()
    return PendingWork(
        fresh_messages=int(fresh[0]),
        turns=int(turns[0]),
        turn_count=int(total[0]) if total is not None else 0,
    )


def earlier_sessions(
    connection: Connection, working_dir: str, *, exclude: str, limit: int
) -> list[str]:
    """The workspace's other top-level sessions, most recently active first."""
    rows = connection.execute(
        "SELECT id FROM agent_sessions WHERE working_dir = ? AND deleted_at IS NULL"
        " AND parent_session_id IS NULL AND id != ? ORDER BY updated_at DESC, id DESC LIMIT ?",
        (working_dir, exclude, limit),
    ).fetchall()
    return [str(row[0]) for row in rows]
