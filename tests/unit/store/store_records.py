"""Shared builders for the store tests (imported by path; no package needed)."""

from __future__ import annotations

import uuid

from relavium_lsp.contracts.content import TextPart
from relavium_lsp.contracts.session import AgentSessionRecord, SessionContext, SessionStatus
from relavium_lsp.store.models import utc_timestamp
from relavium_lsp.store.rows.leases import LeaseClock

# The host every test lease is taken on (process ids mean something only on one host).
HOST = "this-host"


def make_record(
    session_id: str | None = None,
    *,
    working_dir: str = "/work/project",
    title: str | None = None,
    status: SessionStatus = "idle",
    updated_at: str | None = None,
) -> AgentSessionRecord:
    now = updated_at or utc_timestamp()
    return AgentSessionRecord(
        id=session_id or str(uuid.uuid4()),
        agent_slug="relavium-default",
        agent_snapshot={"id": "relavium-default", "name": "Relavium"},
        title=title,
        model_id="gpt-test",
        context=SessionContext(working_dir=working_dir),
        status=status,
        source="cli",
        created_at=now,
        updated_at=now,
    )


def text(value: str) -> list[TextPart]:
    return [TextPart(text=value)]


def clock(now: float, *tokens: str, pid: int = 100, alive: bool = True) -> LeaseClock:
    """A lease clock at ``now`` on :data:`HOST`, holding ``tokens``; ``alive`` answers for pids."""
    return LeaseClock(
        now=now,
        timeout_s=10.0,
        own_tokens=frozenset(tokens),
        host=HOST,
        pid=pid,
        is_alive=lambda _pid: alive,
    )
