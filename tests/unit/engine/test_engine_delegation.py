"""Delegation limits in the engine: depth, unknown agents, and children's spend under the
parent's cost cap (the end-to-end flow is tests/e2e/test_delegation.py)."""

from __future__ import annotations

from pathlib import Path

from relavium_lsp.contracts.content import ToolResultPart
from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.llm.pricing import price_call
from tests.unit.engine.engine_harness import (
    Harness,
    delegating_agents,
    engine,
    scripted,
    text_reply,
    tool_reply,
)


def _delegate(agent: str, task: str, call_id: str) -> list:  # type: ignore[type-arg]
    return tool_reply("delegate", {"agent": agent, "task": task}, call_id)


async def _results(h: Harness, session_id: str) -> list[ToolResultPart]:
    messages, _ = await h.engine.transcript(session_id)
    return [p for m in messages for p in m.content if isinstance(p, ToolResultPart)]


async def test_depth_limit_and_unknown_agents(tmp_path: Path) -> None:
    provider = scripted(
        _delegate("worker", "level one", "c1"),  # boss → worker (depth 1)
        _delegate("worker", "level two", "c2"),  # worker → worker (depth 2)
        _delegate("worker", "level three", "c3"),  # refused: deeper than 2
        _delegate("nobody", "anything", "c4"),  # refused: no such agent
        text_reply("deep done"),
        text_reply("mid done"),
        text_reply("top done"),
    )
    async with engine(tmp_path, provider) as h:
        delegating_agents(h)
        boss = await h.engine.start(
            context=SessionContext(working_dir=str(h.workspace)), agent_ref="boss"
        )
        result = await h.engine.send(boss.id, "go")
        assert result.text.strip() == "top done"
        page = await h.engine.list_sessions()
        parents = {s.id: s.parent_session_id for s in page.sessions}
        assert len(parents) == 3
        mid = next(i for i, p in parents.items() if p == boss.id)
        deep = next(i for i, p in parents.items() if p == mid)
        refused = await _results(h, deep)
        assert "limited to 2 levels" in refused[0].result and refused[0].is_error
        assert "no agent 'nobody'" in refused[1].result and refused[1].is_error
        assert [r.result.strip() for r in await _results(h, mid)] == ["deep done"]
        assert [r.result.strip() for r in await _results(h, boss.id)] == ["mid done"]
        handoffs = await h.engine.list_handoffs(boss.id)
        assert [(x.from_agent, x.to_agent, x.call_id) for x in handoffs] == [
            ("boss", "worker", "c1")
        ]
        for session_id in (boss.id, mid, deep):
            assert await h.status(session_id) == "idle"


async def test_a_childs_spend_counts_toward_the_parents_cap(tmp_path: Path) -> None:
    first = price_call("gpt-4o-mini", TokenUsage(input_tokens=10, output_tokens=5))
    expensive = TokenUsage(input_tokens=400_000, output_tokens=5)
    child_cost = price_call("gpt-4o-mini", expensive).cost_microcents
    cap = first.cost_microcents + child_cost // 2
    provider = scripted(
        _delegate("worker", "spend a lot", "c1"),
        text_reply("spent", usage=(400_000, 5)),
        text_reply("never sent"),
    )
    toml = f'[chat]\nmax_cost_microcents = {cap}\non_exceed = "fail"\n'
    async with engine(tmp_path, provider, project_toml=toml) as h:
        delegating_agents(h)
        boss = await h.engine.start(
            context=SessionContext(working_dir=str(h.workspace)), agent_ref="boss"
        )
        result = await h.engine.send(boss.id, "go")
        assert result.error is not None and result.error.code == "budget_exceeded"
        assert len(provider.requests) == 2  # the parent's second call never went out
        record = await h.engine.record(boss.id)
        assert record.totals.cost_microcents == first.cost_microcents  # its own spend only
        assert await h.status(boss.id) == "idle"  # a refusal, not a failure


async def test_configured_depth_replaces_the_default(tmp_path: Path) -> None:
    provider = scripted(
        _delegate("worker", "level one", "c1"),  # boss → worker (depth 1)
        _delegate("worker", "level two", "c2"),  # refused: [delegation] max_depth = 1
        text_reply("mid done"),
        text_reply("top done"),
    )
    toml = "[delegation]\nmax_depth = 1\n"
    async with engine(tmp_path, provider, project_toml=toml) as h:
        delegating_agents(h)
        boss = await h.engine.start(
            context=SessionContext(working_dir=str(h.workspace)), agent_ref="boss"
        )
        assert (await h.engine.send(boss.id, "go")).text.strip() == "top done"
        page = await h.engine.list_sessions()
        mid = next(s.id for s in page.sessions if s.parent_session_id == boss.id)
        refused = await _results(h, mid)
        assert "limited to 1 levels" in refused[0].result and refused[0].is_error
        assert len(page.sessions) == 2
