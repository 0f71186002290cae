"""The agent's plan: update_plan emits it, the event log keeps it, resume and exports carry it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml

from relavium_lsp.contracts.plan import PlanEntry
from relavium_lsp.store.db.keys import DbKey
from tests.unit.engine.engine_harness import AGENT_YAML, engine, scripted, text_reply, tool_reply

PLAN = [
    {"content": "Find the parser", "status": "completed"},
    {"content": "Fix the off-by-one", "status": "in_progress", "priority": "high"},
    {"content": "Run the tests"},
]


def _planning_agent(workspace: Path) -> None:
    text = AGENT_YAML.format(model="gpt-4o-mini").replace(
        "tools: [read_file, write_file, list_directory]", "tools: [update_plan, read_file]"
    )
    (workspace / ".relavium" / "agents" / "helper.agent.yaml").write_text(text)


async def test_a_plan_is_an_event_survives_a_restart_and_rides_in_exports(tmp_path: Path) -> None:
    db, key = tmp_path / "db" / "history.db", DbKey(os.urandom(32), "env")
    provider = scripted(
        tool_reply("update_plan", {"plan": PLAN, "explanation": "first look"}, "call-plan"),
        text_reply("planned"),
    )
    async with engine(tmp_path / "first", provider, db_path=db, key=key) as first:
        _planning_agent(first.workspace)
        session = await first.start()
        assert await first.engine.plan(session.id) is None
        result = await first.engine.send(session.id, "fix the parser")
        assert result.text.strip() == "planned"
        [event] = first.payloads(session.id, "agent:plan_updated")
        assert [entry.content for entry in event.entries] == [item["content"] for item in PLAN]
        assert event.entries[1].priority == "high" and event.entries[2].status == "pending"
        assert event.explanation == "first look"
        tool_results = first.payloads(session.id, "agent:tool_result")
        assert tool_results[0].success and "1/3 completed" in tool_results[0].output_summary
        # The model read the checklist back.
        [read_back] = provider.requests[1].messages[-1].content
        assert read_back.result.endswith(
            "[x] Find the parser\n[~] Fix the off-by-one\n[ ] Run the tests"
        )
    async with engine(tmp_path / "second", scripted(), db_path=db, key=key) as second:
        resumed = await second.engine.resume(session.id)
        assert resumed.plan is not None
        assert [(e.content, e.status) for e in resumed.plan] == [
            ("Find the parser", "completed"),
            ("Fix the off-by-one", "in_progress"),
            ("Run the tests", "pending"),
        ]
        jsonl = (await second.engine.render_export(session.id, "jsonl")).content
        close = json.loads(jsonl.splitlines()[-1])
        assert close["record"] == "session-close"
        assert close["plan"][1] == {
            "content": "Fix the off-by-one",
            "status": "in_progress",
            "priority": "high",
        }
        imported = await second.engine.import_jsonl(jsonl)  # the plan is valid on the way in
        assert imported != session.id
        workflow = (await second.engine.render_export(session.id, "workflow")).content
        exported = yaml.safe_load(workflow)["metadata"]["relaviumExport"]["plan"]
        assert [PlanEntry.model_validate(item) for item in exported] == resumed.plan


async def test_an_empty_plan_clears_it(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("update_plan", {"plan": PLAN[:1]}, "call-1"),
        tool_reply("update_plan", {"plan": []}, "call-2"),
        text_reply("done"),
    )
    async with engine(tmp_path, provider) as h:
        _planning_agent(h.workspace)
        session = await h.start()
        await h.engine.send(session.id, "plan, then drop it")
        assert len(h.payloads(session.id, "agent:plan_updated")) == 2
        assert await h.engine.plan(session.id) is None
        assert (await h.engine.resume(session.id)).plan is None
        jsonl = (await h.engine.render_export(session.id, "jsonl")).content
        assert "plan" not in json.loads(jsonl.splitlines()[-1])
