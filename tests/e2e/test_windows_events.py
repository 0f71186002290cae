"""Two server processes, one session's events: one gapless sequence whoever appends (§3.1).

While window A runs a turn it holds the session's lease and numbers the session's events
itself — delivered to its editor before they are written. Window B's events for that session
(an export here) wait in the session's inbox until A numbers them, or until whoever takes a
dead A's lease over does. Real ``relavium-lsp serve`` processes on one encrypted database.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import (
    EditorClient,
    configure_loopback_provider,
    editor,
    gated_stream,
    make_git_workspace,
    poll_until,
)
from tests.unit.llm.wire_servers import LoopbackServer, openai_stream


async def _log(client: EditorClient, session_id: str) -> list[dict[str, Any]]:
    page = await client.request(
        methods.SESSION_EVENTS, {"sessionId": session_id, "afterSequence": 0, "limit": 10_000}
    )
    return list(page["events"])


def _seq(events: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(event["sequenceNumber"], event["type"]) for event in events]


async def test_another_windows_event_joins_the_running_turns_sequence(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    gate = threading.Event()
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(gated_stream(["one ", "two "], ["three ", "four"], gate))
        async with editor(workspace, home) as a, editor(workspace, home) as b:
            session = (await a.request(methods.START_SESSION, {"agentRef": "coder"}))["sessionId"]
            turn = asyncio.ensure_future(
                a.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "count"})
            )
            await a.wait_for_event(session, "agent:token")
            resumed = await b.request(methods.RESUME_SESSION, {"sessionId": session})
            after = resumed["lastEventSequence"]
            # B appends while A owns the numbering: it is numbered by A, heard by both.
            await b.request(methods.EXPORT_SESSION, {"sessionId": session, "format": "jsonl"})
            await a.wait_for_event(session, "session:exported")
            gate.set()
            result = await turn
            assert result["stopReason"] == "stop"
            await b.wait_for_event(session, "session:turn_completed")

            seen_by_a = _seq(a.events_of(session))
            assert [number for number, _type in seen_by_a] == list(range(1, len(seen_by_a) + 1))
            assert [kind for _n, kind in seen_by_a].count("session:exported") == 1
            # B saw the same numbers, in the same order, from where it resumed.
            assert _seq(b.events_of(session)) == [e for e in seen_by_a if e[0] > after]
            # And the durable log holds exactly that sequence, payloads included.
            log = await _log(b, session)
            assert _seq(log) == seen_by_a
            tokens = [e["token"] for e in log if e["type"] == "agent:token"]
            assert tokens == [e["token"] for e in a.events_of(session, "agent:token")]
            assert "".join(tokens) == "one two three four"


async def test_the_inbox_of_a_killed_owner_is_folded_by_the_window_that_takes_over(
    tmp_path: Path,
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    # A never looks at its inbox (its watcher polls once an hour): B's event stays there.
    slow_watch = {"RELAVIUM_WATCH_INTERVAL_S": "3600"}
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(text=["never ", "finished"], ending="stall"))
        async with editor(workspace, home, env=slow_watch) as a, editor(workspace, home) as b:
            session = (await a.request(methods.START_SESSION, {"agentRef": "coder"}))["sessionId"]
            turn = asyncio.ensure_future(
                a.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "go"})
            )
            await a.wait_for_event(session, "agent:token")
            await b.request(methods.RESUME_SESSION, {"sessionId": session})
            await b.request(methods.EXPORT_SESSION, {"sessionId": session, "format": "jsonl"})
            assert not b.events_of(session, "session:exported")  # numbered by A, who is stuck
            await a.kill_server()
            await asyncio.gather(turn, return_exceptions=True)

            # B's next look at the list takes the dead owner's lease over and folds the inbox.
            async def listed_idle() -> bool:
                listed = await b.request(methods.LIST_SESSIONS, {})
                return any(r["id"] == session and r["status"] == "idle" for r in listed["sessions"])

            await poll_until(listed_idle, "B to take the dead owner's lease over")
            exported = await b.wait_for_event(session, "session:exported")
            log = await _log(b, session)
            numbers = [event["sequenceNumber"] for event in log]
            assert numbers == sorted(set(numbers))  # in order, no number twice
            assert [e["type"] for e in log].count("session:exported") == 1
            assert log[-1]["type"] == "session:exported"
            assert exported["sequenceNumber"] == log[-1]["sequenceNumber"]
            # A delivered numbers it may not have written: none of them is given again. What
            # the log numbered after the takeover lies above everything A's editor received
            # (a hole in between, which the clients step over), and a number A's editor got
            # is, in the log, the very event it got.
            seen_by_a = dict(_seq(a.events_of(session)))
            assert seen_by_a, "A's editor saw the turn's events before A was killed"
            newest_seen_by_a = max(seen_by_a)
            assert exported["sequenceNumber"] > newest_seen_by_a
            for number, kind in _seq(log):
                if number in seen_by_a:
                    assert seen_by_a[number] == kind
                else:
                    assert number > newest_seen_by_a
            assert all(
                event["sequenceNumber"] > newest_seen_by_a
                for event in b.events_of(session)
                if event["sequenceNumber"] not in seen_by_a
            )
