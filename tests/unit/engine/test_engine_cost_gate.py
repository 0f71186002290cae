"""Every provider call is checked against the cost cap before it is sent (issue 38).

The check lives in one place (``engine/model_calls.py``); these tests reach it through each
kind of call: a pricier fallback attempt, a compaction summary, an introspection pass and a
delegated child's call, which obeys the top-most session's ``on_exceed``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.engine.introspection import CheckpointRefused
from relavium_lsp.llm.pricing import price_call
from relavium_lsp.llm.seam import ErrorChunk, LlmError
from tests.unit.engine.engine_harness import (
    delegating_agents,
    engine,
    scripted,
    text_reply,
    tool_reply,
)


def _rate_limited() -> list[ErrorChunk]:
    return [ErrorChunk(error=LlmError(kind="rate_limit", message="busy", status=429))]


async def test_a_pricier_fallback_attempt_is_checked_at_its_own_price(tmp_path: Path) -> None:
    primary = scripted(_rate_limited())
    fallback = scripted(text_reply("expensive answer"))
    # The primary's estimated input is far under the cap; the same input on the fallback's
    # model (100 times the input price) is far over it.
    toml = '[chat]\nmax_cost_microcents = 200000\non_exceed = "fail"\n'
    async with engine(
        tmp_path, primary, fallback, models=("gpt-4o-mini", "claude-opus-4"), project_toml=toml
    ) as h:
        session = await h.start()
        result = await h.engine.send(session.id, "hello " * 100)
        assert result.error is not None and result.error.code == "budget_exceeded"
        assert len(primary.requests) == 1  # the first attempt went out and failed
        assert fallback.requests == []  # the pricier one was refused before it was sent
        message = result.error.message
        assert "nothing was sent" in message


async def test_a_compaction_summary_refused_by_the_cap_falls_back_to_a_trim(
    tmp_path: Path,
) -> None:
    long_text = "word " * 2000
    provider = scripted(
        text_reply("ok one", usage=(3_000, 5)),
        text_reply("ok two", usage=(400, 5)),
        context_window=4_000,
    )
    first_cost = price_call("gpt-4o-mini", TokenUsage(input_tokens=3_000, output_tokens=5))
    # Room for the cheap turn calls, not for a summary over the whole history.
    cap = first_cost.cost_microcents + 20_000
    toml = f'[chat]\ncompact_threshold = 0.5\nmax_cost_microcents = {cap}\non_exceed = "fail"\n'
    async with engine(tmp_path, provider, project_toml=toml) as h:
        session = await h.start()
        await h.engine.send(session.id, long_text)
        result = await h.engine.send(session.id, "and now?")
        assert result.text.strip() == "ok two"
        assert len(provider.requests) == 2  # no summary call was made
        assert h.payloads(session.id, "session:trimmed")
        assert not h.payloads(session.id, "session:compacted")


async def test_an_introspection_pass_refused_by_the_cap_sends_nothing(tmp_path: Path) -> None:
    # The turn's call is allowed and spends all but 100 micro-cents of the cap.
    provider = scripted(text_reply("hello", usage=(1_000_000, 5)), text_reply("never sent"))
    first = price_call("gpt-4o-mini", TokenUsage(input_tokens=1_000_000, output_tokens=5))
    toml = f'[chat]\nmax_cost_microcents = {first.cost_microcents + 100}\non_exceed = "fail"\n'
    async with engine(tmp_path, provider, project_toml=toml) as h:
        session = await h.start()
        assert (await h.engine.send(session.id, "hi")).stop_reason == "stop"
        with pytest.raises(CheckpointRefused) as refused:
            await h.engine.checkpoint(session.id)
        assert refused.value.code == "budget_exceeded"
        assert len(provider.requests) == 1


async def test_a_delegated_child_pauses_under_the_parents_cap(tmp_path: Path) -> None:
    """The parent's ``pause_for_approval`` governs its child's calls (not a silent failure)."""
    task = "spend a lot " * 1_500  # its estimate alone is over the cap
    provider = scripted(
        tool_reply("delegate", {"agent": "worker", "task": task}, "c1"),
        text_reply("child done", usage=(40_000, 5)),
        text_reply("parent done"),
    )
    toml = '[chat]\nmax_cost_microcents = 40000\non_exceed = "pause_for_approval"\n'
    async with engine(tmp_path, provider, project_toml=toml) as h:
        delegating_agents(h)
        boss = await h.engine.start(
            context=SessionContext(working_dir=str(h.workspace)), agent_ref="boss"
        )
        result = await h.engine.send(boss.id, "go")
        assert result.text.strip() == "parent done"
        child = next(s.id for s in (await h.engine.list_sessions()).sessions if s.parent_session_id)
        asked = [(r.session_id, r.tool_id) for r in h.host.asked]
        assert (child, "cost_cap") in asked  # the child's call waited for the user
        child_messages, _ = await h.engine.transcript(child)
        assert child_messages[-1].content[0].text.strip() == "child done"  # type: ignore[union-attr]
        # What the child spent counts toward the parent's cap.
        child_cost = price_call("gpt-4o-mini", TokenUsage(input_tokens=40_000, output_tokens=5))
        parent = await h.engine.session(boss.id)
        assert parent.record.totals.cost_microcents < child_cost.cost_microcents
        costs = await h.store.run(lambda s: s.descendants_cost(boss.id))
        assert costs == child_cost.cost_microcents
