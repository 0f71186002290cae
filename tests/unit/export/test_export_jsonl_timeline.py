"""A JSONL transcript with every record kind seed 004 names, in time order (issue 39).

The golden ``golden/full_timeline.jsonl`` holds a session with a delegation (its handoff,
with its time and input filter, and the agent it registered), a rolled-back turn, a plan
write and a checkpoint. Export → import (into a real engine and store) → export gives the
golden's bytes again, apart from the new session id, twice over.
"""

from __future__ import annotations

import json
from pathlib import Path

from relavium_lsp.contracts.content import TextPart, ToolCallPart, ToolResultPart
from relavium_lsp.contracts.delegation import HandoffInputFilter
from relavium_lsp.contracts.events import SessionCheckpoint, StampedEvent
from relavium_lsp.contracts.plan import AgentPlanUpdated, PlanEntry
from relavium_lsp.contracts.session import HandoffRecord, RolledBackTurn
from relavium_lsp.export.jsonl import export_jsonl
from tests.unit.export.export_support import SESSION_ID, Transcript, make_record, open_rig
from tests.unit.export.test_export_golden import GOLDEN, _check

PLAN = [PlanEntry(content="Ask the coder", status="completed"), PlanEntry(content="Answer")]


def _full_timeline_export() -> str:
    t = Transcript()
    t.add("user", "What does app.py define?")
    t.add(
        "assistant",
        [
            TextPart(text="Asking the coder."),
            ToolCallPart(id="d1", name="delegate", args={"agent": "coder", "task": "Name it."}),
        ],
    )
    t.add("tool", [ToolResultPart(tool_call_id="d1", result="It is add.")])
    t.add("assistant", "The coder says: add.")
    t.add("user", "Now break it.")
    t.add("assistant", "Breaking")
    t.add("user", "Thanks!")
    t.add("assistant", "You're welcome.")
    hidden = [m for m in t.messages if m.sequence_number in (5, 6)]
    visible = [m for m in t.messages if m not in hidden]
    rolled_back = RolledBackTurn(
        user_message_sequence=5,
        stop_reason="error",
        error_code="provider_unavailable",
        messages=hidden,
    )
    handoff = HandoffRecord(
        id="h-1",
        session_id=SESSION_ID,
        child_session_id="child-1",
        from_agent="relavium-default",
        to_agent="coder",
        reason="coder knows the code",
        sequence_number=2,
        call_id="d1",
        created_at="2025-03-01T09:00:02.500Z",
        cost_cap_microcents=5000,
        input_filter=HandoffInputFilter(kind="last_n", last_n=2),
        context_messages=2,
    )
    timeline = [
        StampedEvent(
            session_id=SESSION_ID,
            sequence_number=1,
            timestamp="2025-03-01T09:00:01.500Z",
            payload=AgentPlanUpdated(entries=[PlanEntry(content="Ask the coder")]),
        ),
        StampedEvent(
            session_id=SESSION_ID,
            sequence_number=2,
            timestamp="2025-03-01T09:00:04.000Z",
            payload=AgentPlanUpdated(entries=PLAN, explanation="asked"),
        ),
        StampedEvent(
            session_id=SESSION_ID,
            sequence_number=3,
            timestamp="2025-03-01T09:00:07.500Z",
            payload=SessionCheckpoint(
                reason="manual",
                through_sequence=7,
                description="Read app.py through the coder.",
                working_memory="app.py defines add.",
            ),
        ),
    ]
    record = make_record(title="Delegated question", turn_count=3)
    return export_jsonl(
        record, visible, PLAN, rolled_back=[rolled_back], handoffs=[handoff], timeline=timeline
    )


def test_every_record_kind_in_time_order() -> None:
    text = _full_timeline_export()
    _check(GOLDEN / "full_timeline.jsonl", text)
    lines = [json.loads(line) for line in text.splitlines()]
    kinds = [line["record"] for line in lines]
    assert kinds == [
        "session-open",
        "agent-registered",
        "message",
        "progress-write",
        "message",
        "tool-call",
        "agent-registered",  # the coder, registered before the handoff that names it
        "handoff",
        "tool-result",
        "message",
        "progress-write",
        "rolled-back-turn",
        "message",
        "checkpoint",
        "message",
        "session-close",
    ]
    hidden = lines[kinds.index("rolled-back-turn")]["messages"]
    assert [m["timestamp"] for m in hidden] == [
        "2025-03-01T09:00:05.000Z",
        "2025-03-01T09:00:06.000Z",
    ]
    timed = [line.get("timestamp") for line in lines[1:-1] if "timestamp" in line]
    assert timed == sorted(timed)
    handoff = lines[kinds.index("handoff")]
    assert handoff["timestamp"] == "2025-03-01T09:00:02.500Z"
    assert handoff["inputFilter"] == {"kind": "last_n", "lastN": 2, "stripToolResults": False}


async def test_export_import_export_is_byte_identical(tmp_path: Path) -> None:
    first = _full_timeline_export()
    rig = await open_rig(tmp_path / "home")
    try:
        text = first
        for _ in range(2):
            imported = await rig.engine.import_jsonl(text)
            assert imported != SESSION_ID
            text = (await rig.engine.render_export(imported, "jsonl")).content
            assert text.replace(imported, SESSION_ID) == first
        # What came back is in the store, not only in the text: the handoff, the hidden turn.
        handoffs = await rig.engine.list_handoffs(imported, agent="coder", direction="incoming")
        assert [(h.call_id, h.child_session_id) for h in handoffs] == [("d1", "child-1")]
        _, visible = await rig.engine.full_transcript(imported)
        assert [m.sequence_number for m in visible] == [1, 2, 3, 4, 7, 8]
    finally:
        await rig.close()
