"""Turn caps, the tool-loop guard and the pre-egress cost cap in each on_exceed mode."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.unit.engine.engine_harness import engine, scripted, text_reply, tool_reply


async def test_turn_cap_ends_loudly_without_a_provider_call(tmp_path: Path) -> None:
    provider = scripted(text_reply("one"), text_reply("two"))
    async with engine(tmp_path, provider, project_toml="[chat]\nmax_turns = 1\n") as h:
        session = await h.start()
        assert (await h.engine.send(session.id, "first")).stop_reason == "stop"
        result = await h.engine.send(session.id, "second")
        assert result.stop_reason == "error"
        assert result.error is not None and result.error.code == "turn_limit"
        assert len(provider.requests) == 1
        completed = h.payloads(session.id, "session:turn_completed")
        assert len(completed) == 2 and completed[-1].error.code == "turn_limit"
        messages, _ = await h.engine.transcript(session.id)
        assert [m.role for m in messages] == ["user", "assistant"]
        # The refused turn reports where the transcript ends, and a refusal is not a failure.
        assert result.last_sequence == messages[-1].sequence_number == 2
        assert await h.status(session.id) == "idle"


async def test_turn_cap_survives_resume(tmp_path: Path) -> None:
    db = tmp_path / "shared" / "history.db"
    from relavium_lsp.store.db.keys import DbKey

    key = DbKey(b"\x01" * 32, "env")
    async with engine(
        tmp_path / "a",
        scripted(text_reply("one")),
        project_toml="[chat]\nmax_turns = 1\n",
        db_path=db,
        key=key,
    ) as first:
        session = await first.start()
        await first.engine.send(session.id, "first")
    second_provider = scripted(text_reply("never"))
    async with engine(
        tmp_path / "a", second_provider, project_toml="[chat]\nmax_turns = 1\n", db_path=db, key=key
    ) as second:
        result = await second.engine.send(session.id, "again")
        assert result.error is not None and result.error.code == "turn_limit"
        assert second_provider.requests == []


async def test_tool_loop_guard_uses_the_turn_limit_code(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("list_directory", {}, "c1"),
        tool_reply("list_directory", {}, "c2"),
        tool_reply("list_directory", {}, "c3"),
    )
    async with engine(tmp_path, provider, project_toml="[chat]\nmax_tool_turns = 2\n") as h:
        session = await h.start()
        result = await h.engine.send(session.id, "loop forever")
        assert result.error is not None and result.error.code == "turn_limit"
        assert len(provider.requests) == 3
        assert h.types(session.id).count("agent:tool_call") == 2  # the third round never ran
        messages, _ = await h.engine.transcript(session.id)
        assert messages == []  # the failed turn is rolled out
        await h.assert_books_balance(session.id)


CAP = '[chat]\nmax_cost_microcents = 1\non_exceed = "{mode}"\n'


async def test_cost_cap_fail_refuses_before_egress(tmp_path: Path) -> None:
    provider = scripted(text_reply("too expensive"))
    async with engine(tmp_path, provider, project_toml=CAP.format(mode="fail")) as h:
        session = await h.start()
        result = await h.engine.send(session.id, "hello " * 200)
        assert result.error is not None and result.error.code == "budget_exceeded"
        assert provider.requests == []
        assert "cost:updated" not in h.types(session.id)


async def test_cost_cap_warn_emits_once_and_continues(tmp_path: Path) -> None:
    provider = scripted(text_reply("fine"), text_reply("still fine"))
    async with engine(tmp_path, provider, user_toml=CAP.format(mode="warn")) as h:
        session = await h.start()
        assert (await h.engine.send(session.id, "hello " * 200)).stop_reason == "stop"
        assert (await h.engine.send(session.id, "again " * 200)).stop_reason == "stop"
        warnings = h.payloads(session.id, "session:budget_warning")
        assert len(warnings) == 1 and warnings[0].on_exceed == "warn"
        assert len(provider.requests) == 2
        await h.assert_books_balance(session.id)


async def test_cost_cap_pause_waits_for_the_user(tmp_path: Path) -> None:
    provider = scripted(text_reply("approved answer"))
    async with engine(tmp_path, provider, user_toml=CAP.format(mode="pause_for_approval")) as h:
        h.host.hold = asyncio.Event()
        session = await h.start()
        turn = asyncio.create_task(h.engine.send(session.id, "hello " * 200))
        await h.host.asked_event.wait()
        assert await h.status(session.id) == "awaiting_approval"
        assert provider.requests == []
        request = h.host.asked[0]
        assert request.tool_id == "cost_cap" and request.action == "egress"
        h.host.hold.set()
        result = await turn
        assert result.stop_reason == "stop"
        assert await h.status(session.id) == "idle"
        types = h.types(session.id)
        assert types.index("session:budget_warning") < types.index("agent:approval_requested")


async def test_cost_cap_pause_rejected_ends_with_budget_exceeded(tmp_path: Path) -> None:
    provider = scripted(text_reply("never"))
    async with engine(tmp_path, provider, user_toml=CAP.format(mode="pause_for_approval")) as h:
        h.host.decision = "reject"
        session = await h.start()
        result = await h.engine.send(session.id, "hello " * 200)
        assert result.error is not None and result.error.code == "budget_exceeded"
        assert provider.requests == []


async def test_abort_while_waiting_for_approval_rejects_and_runs_nothing(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("write_file", {"path": "x.txt", "content": "x"}, "c1"), text_reply("no")
    )
    async with engine(tmp_path, provider) as h:
        h.host.hold = asyncio.Event()
        session = await h.start()
        turn = asyncio.create_task(h.engine.send(session.id, "write"))
        await h.host.asked_event.wait()
        assert await h.status(session.id) == "awaiting_approval"
        await h.engine.abort(session.id)
        result = await turn
        assert result.stop_reason == "aborted"
        h.host.hold.set()
        assert not (h.workspace / "x.txt").exists()
        assert await h.status(session.id) == "idle"
        assert len(provider.requests) == 1
