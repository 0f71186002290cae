"""The engine's front door: subscriptions from a sequence number, and the one way to ask."""

from __future__ import annotations

import asyncio
from pathlib import Path

from relavium_lsp.contracts.events import StampedEvent
from tests.unit.engine.engine_harness import engine, scripted, text_reply, tool_reply


def _sequences(events: list[StampedEvent]) -> list[int]:
    return [event.sequence_number for event in events]


async def test_a_subscription_from_a_sequence_gets_the_backlog_then_live_events(
    tmp_path: Path,
) -> None:
    provider = scripted(text_reply("one two"), text_reply("three four"))
    async with engine(tmp_path, provider) as h:
        session = await h.start()
        other = await h.start()
        await h.engine.send(session.id, "first")
        seen: list[StampedEvent] = []
        await h.engine.subscribe(seen.append, session_id=session.id, after_sequence=2)
        backlog_end = seen[-1].sequence_number
        assert _sequences(seen) == list(range(3, backlog_end + 1))
        await h.engine.send(other.id, "elsewhere")  # another session's events stay out
        await h.engine.send(session.id, "second")
        assert {event.session_id for event in seen} == {session.id}
        assert _sequences(seen) == list(range(3, seen[-1].sequence_number + 1))
        assert seen[-1].sequence_number > backlog_end
        assert seen[-1].type == "session:turn_completed"


async def test_subscribing_mid_turn_misses_nothing_and_repeats_nothing(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("write_file", {"path": "a.txt", "content": "a"}, "c1"), text_reply("done")
    )
    async with engine(tmp_path, provider) as h:
        h.host.hold = asyncio.Event()
        session = await h.start()
        turn = asyncio.create_task(h.engine.send(session.id, "write a"))
        await h.host.asked_event.wait()  # the turn is paused on its approval question
        seen: list[StampedEvent] = []
        await h.engine.subscribe(seen.append, session_id=session.id, after_sequence=0)
        h.host.hold.set()
        assert (await turn).stop_reason == "stop"
        everything = await h.engine.events_after(session.id, 0)
        assert _sequences(seen) == _sequences(everything)
        assert _sequences(seen) == list(range(1, len(seen) + 1))


async def test_live_subscriptions_without_a_session_see_every_session(tmp_path: Path) -> None:
    provider = scripted(text_reply("a"), text_reply("b"))
    async with engine(tmp_path, provider) as h:
        seen: list[StampedEvent] = []
        unsubscribe = await h.engine.subscribe(seen.append)
        first, second = await h.start(), await h.start()
        await h.engine.send(first.id, "one")
        unsubscribe()
        await h.engine.send(second.id, "two")
        assert {event.session_id for event in seen} == {first.id, second.id}
        assert not any(
            event.session_id == second.id and event.type == "session:turn_started" for event in seen
        )


async def test_an_unanswered_question_times_out_and_the_session_stops_waiting(
    tmp_path: Path,
) -> None:
    provider = scripted(
        tool_reply("write_file", {"path": "late.txt", "content": "x"}, "c1"), text_reply("ok")
    )
    toml = "[chat]\napproval_timeout_s = 0.05\n"
    async with engine(tmp_path, provider, project_toml=toml) as h:
        h.host.hold = asyncio.Event()  # nobody ever answers
        session = await h.start()
        result = await h.engine.send(session.id, "write it")
        assert result.stop_reason == "stop"
        [tool_result] = h.payloads(session.id, "agent:tool_result")
        assert tool_result.error_code == "tool_denied"
        types = h.types(session.id)
        assert types.index("agent:tool_call") < types.index("agent:approval_requested")
        assert types.index("agent:approval_requested") < types.index("agent:tool_result")
        assert not (h.workspace / "late.txt").exists()
        assert await h.status(session.id) == "idle"
        assert not h.engine.is_running(session.id)
