"""Events another process commits reach this engine's subscribers in order (docs/design.md §3.1).

``Harness.store`` is a second connection to the engine's database — what another window's
server process would write through.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from relavium_lsp.contracts.events import AgentToken, SessionExported, StampedEvent
from relavium_lsp.contracts.wire import SessionListChange
from tests.unit.engine.engine_harness import (
    engine,
    scripted,
    text_reply,
    tool_reply,
    until,
)


def _token(text: str) -> AgentToken:
    return AgentToken(token=text, model="other-window")


async def test_events_another_process_commits_are_delivered_in_order(tmp_path: Path) -> None:
    async with engine(tmp_path, scripted()) as h:
        session = (await h.start()).record.id
        seen: list[StampedEvent] = []
        await h.engine.subscribe(seen.append, session_id=session, after_sequence=0)
        await until(lambda: len(seen) == 1, "session:started")
        await h.store.run(lambda s: s.append_events(session, [_token("a"), _token("b")]))
        await h.store.run(lambda s: s.append_events(session, [_token("c")]))
        await until(lambda: len(seen) == 4, "the other process's events")
        assert [event.sequence_number for event in seen] == [1, 2, 3, 4]
        assert [getattr(event.payload, "token", None) for event in seen[1:]] == ["a", "b", "c"]


async def test_a_local_event_after_remote_ones_is_delivered_after_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The watcher polls once an hour here: only the bus's gap filling can deliver 2..3.
    monkeypatch.setenv("RELAVIUM_WATCH_INTERVAL_S", "3600")
    async with engine(tmp_path, scripted()) as h:
        session = (await h.start()).record.id
        await h.engine.flush_events(session)
        await h.store.run(lambda s: s.append_events(session, [_token("a"), _token("b")]))
        await h.engine.resume(session)  # a local event: session:started (resumed)
        await h.engine.flush_events(session)
        mine = [event for event in h.events if event.session_id == session]
        assert [event.sequence_number for event in mine] == [1, 2, 3, 4]
        assert [event.type for event in mine] == [
            "session:started",
            "agent:token",
            "agent:token",
            "session:started",
        ]


async def test_list_changes_from_any_process_reach_list_listeners(tmp_path: Path) -> None:
    async with engine(tmp_path, scripted()) as h:
        changes: list[SessionListChange] = []
        h.engine.watch_sessions(changes.extend)
        session = (await h.start()).record.id
        await h.store.run(lambda s: s.rename_session(session, "renamed elsewhere"))
        await until(lambda: len(changes) >= 2, "created and renamed")
        assert [(c.session_id, c.kind) for c in changes] == [
            (session, "created"),
            (session, "renamed"),
        ]


async def test_a_turns_events_are_the_logs_and_another_process_joins_through_the_inbox(
    tmp_path: Path,
) -> None:
    provider = scripted(
        tool_reply("write_file", {"path": "a.txt", "content": "a"}, "c1"), text_reply("done")
    )
    async with engine(tmp_path, provider) as h:
        h.host.hold = asyncio.Event()
        session = (await h.start()).record.id
        turn = asyncio.create_task(h.engine.send(session, "write a"))
        await h.host.asked_event.wait()  # mid-turn: this engine holds the lease
        exported = SessionExported(workflow_path="elsewhere.jsonl", format="jsonl")
        # Another process appends: while the lease is live its events wait in the inbox.
        assert await h.store.run(lambda s: s.append_events(session, [exported])) == []
        await until(lambda: "session:exported" in h.types(session), "the owner to number the inbox")
        h.host.hold.set()
        assert (await turn).stop_reason == "stop"
        await h.engine.flush_events(session)
        log = await h.store.run(lambda s: s.events_after(session, 0, 10_000))
        mine = [event for event in h.events if event.session_id == session]
        assert [e.model_dump_json() for e in mine] == [e.model_dump_json() for e in log]
        assert [e.sequence_number for e in log] == list(range(1, len(log) + 1))
        assert [e.type for e in log].count("session:exported") == 1
        assert await h.store.run(lambda s: s.read_event_inbox(session, 0)) == []
