"""The session's current plan: the newest ``agent:plan_updated`` in its durable event log.

The plan has no table of its own: ``update_plan`` emits an event, the bus persists it before
anyone sees it, and this reads the newest one back. It walks the session's events newest
first along the primary key; only resume and export ask, so no extra index (and no schema
migration) is needed.
"""

from __future__ import annotations

import json

from relavium_lsp.contracts.plan import AgentPlanUpdated
from relavium_lsp.store.sessions import SessionStore

PLAN_EVENT = "agent:plan_updated"


def latest_plan(store: SessionStore, session_id: str) -> AgentPlanUpdated | None:
    """The session's newest plan event, or ``None`` when the agent never made a plan."""
    row = store.connection.execute(
        "SELECT payload FROM session_events WHERE session_id = ? AND type = ?"
        " ORDER BY sequence_number DESC LIMIT 1",
        (session_id, PLAN_EVENT),
    ).fetchone()
    if row is None:
        return None
    return AgentPlanUpdated.model_validate(json.loads(row[0]))
