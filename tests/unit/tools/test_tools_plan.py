"""update_plan through the registry: one event per call, a checklist back, strict arguments."""

from __future__ import annotations

from relavium_lsp.contracts.plan import AgentPlanUpdated


async def test_update_plan_emits_the_whole_plan_and_answers_a_checklist(harness) -> None:
    outcome = await harness.call(
        "update_plan",
        {
            "plan": [
                {"content": "Search for the bug", "status": "completed"},
                {"content": "Write the fix", "status": "in_progress"},
                {"content": "Run the tests", "priority": "low"},
            ],
            "explanation": "found it",
        },
    )
    assert not outcome.is_error
    assert outcome.result == (
        "Plan updated (1/3 completed):\n"
        "[x] Search for the bug\n[~] Write the fix\n[ ] Run the tests"
    )
    [event] = harness.events_of("agent:plan_updated")
    assert isinstance(event, AgentPlanUpdated)
    assert [e.status for e in event.entries] == ["completed", "in_progress", "pending"]
    assert event.entries[2].priority == "low" and event.explanation == "found it"
    assert event.to_wire()["entries"][0] == {
        "content": "Search for the bug",
        "status": "completed",
        "priority": "medium",
    }
    cleared = await harness.call("update_plan", {"plan": []})
    assert cleared.result == "Plan cleared."
    assert harness.events_of("agent:plan_updated")[-1].entries == []


async def test_update_plan_refuses_bad_steps(harness) -> None:
    for args in (
        {"plan": [{"content": "x", "status": "done"}]},
        {"plan": [{"content": ""}]},
        {"plan": [{"content": "x"}] * 51},
        {"plan": [{"content": "x", "owner": "me"}]},
    ):
        outcome = await harness.call("update_plan", args)
        assert outcome.error_code == "validation", args
    assert harness.events_of("agent:plan_updated") == []
