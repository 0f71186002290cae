"""One history, many windows: several real server processes on one database (issue 18).

Each ``editor(...)`` is its own ``relavium-lsp serve`` process; they share ``home`` and so
the encrypted history database. Nothing here sleeps to synchronise: the tests wait for
events, or poll a condition against a deadline.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

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

# Heartbeats often, so that an abort from another window lands fast; the default timeout
# (15 s) keeps a live owner from looking stale on a loaded machine.
FAST_HEARTBEAT = {"RELAVIUM_LEASE_HEARTBEAT_S": "0.2"}


async def _status(client: EditorClient, session_id: str) -> str:
    listed = await client.request(methods.LIST_SESSIONS, {})
    (row,) = [row for row in listed["sessions"] if row["id"] == session_id]
    return str(row["status"])


async def _transcript(client: EditorClient, session_id: str) -> list[dict[str, Any]]:
    page = await client.request(methods.GET_TRANSCRIPT, {"sessionId": session_id})
    return list(page["messages"])


def _markers(messages: list[dict[str, Any]]) -> int:
    return sum(1 for message in messages if message.get("interruption"))


async def test_second_window_reads_a_running_turn_but_never_writes_into_it(
    tmp_path: Path,
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    gate = threading.Event()
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(gated_stream(["live ", "tokens "], ["and ", "the end"], gate))
        async with (
            editor(workspace, home, env=FAST_HEARTBEAT) as a,
            editor(workspace, home, env=FAST_HEARTBEAT) as b,
        ):
            started = await a.request(methods.START_SESSION, {"agentRef": "coder"})
            session = started["sessionId"]
            turn = asyncio.ensure_future(
                a.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "go"})
            )
            await a.wait_for_event(session, "agent:token")

            resumed = await b.request(methods.RESUME_SESSION, {"sessionId": session})
            assert resumed["session"]["status"] == "streaming"
            assert [m["role"] for m in resumed["messages"]] == ["user"]  # no marker written
            refusals = (
                (methods.SEND_MESSAGE, {"sessionId": session, "text": "me too"}),
                (methods.SEND_MESSAGE, {"sessionId": session, "text": "me too", "wait": False}),
                (methods.DELETE_SESSION, {"sessionId": session}),
                (methods.COMPACT_SESSION, {"sessionId": session}),
                (methods.CANCEL_SESSION, {"sessionId": session}),
            )
            for method, params in refusals:
                with pytest.raises(JsonRpcException) as refused:
                    await b.request(method, params)
                assert refused.value.data == {"code": "session_running_elsewhere"}, method
                assert refused.value.code == -32005
                assert "another window" in str(refused.value.message)
            assert await _status(b, session) == "streaming"
            exported = await b.request(
                methods.EXPORT_SESSION, {"sessionId": session, "format": "jsonl"}
            )
            assert exported  # reading and exporting stay allowed

            gate.set()
            result = await turn
            assert result["stopReason"] == "stop"
            assert result["text"] == "live tokens and the end"
            await poll_until(lambda: _is(b, session, "idle"), "window B to list the session idle")
            messages = await _transcript(b, session)
            assert [m["role"] for m in messages] == ["user", "assistant"]
            assert _markers(messages) == 0
            # Settled, the session is B's to continue.
            model.script(openai_stream(text=["second ", "window"]))
            second = await b.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "b"})
            assert second["text"] == "second window"


async def _is(client: EditorClient, session_id: str, status: str) -> bool:
    return await _status(client, session_id) == status


async def test_kill_9_mid_turn_lists_idle_with_one_interruption_marker(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(text=["never ", "finished"], ending="stall"))
        async with editor(workspace, home) as a:
            session = (await a.request(methods.START_SESSION, {"agentRef": "coder"}))["sessionId"]
            turn = asyncio.ensure_future(
                a.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "go"})
            )
            await a.wait_for_event(session, "agent:token")
            await a.kill_server()
            await asyncio.gather(turn, return_exceptions=True)
        # A fresh process lists it idle at once (the owner's process is gone), no resume.
        async with editor(workspace, home) as b, editor(workspace, home) as c:
            assert await _status(b, session) == "idle"
            assert await _status(c, session) == "idle"
            messages = await _transcript(c, session)
            assert [m["role"] for m in messages] == ["user", "system"]
            assert _markers(messages) == 1
            await b.request(methods.RESUME_SESSION, {"sessionId": session})
            await c.request(methods.RESUME_SESSION, {"sessionId": session})
            assert _markers(await _transcript(b, session)) == 1


async def test_a_stalled_owner_is_taken_over_after_the_timeout_exactly_once(
    tmp_path: Path,
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    short = {"RELAVIUM_LEASE_TIMEOUT_S": "2", "RELAVIUM_LEASE_HEARTBEAT_S": "0.2"}
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(text=["stalled ", "turn"], ending="stall"))
        async with editor(workspace, home, env=short) as a, editor(workspace, home, env=short) as b:
            session = (await a.request(methods.START_SESSION, {"agentRef": "coder"}))["sessionId"]
            turn = asyncio.ensure_future(
                a.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "go"})
            )
            await a.wait_for_event(session, "agent:token")
            assert await _status(b, session) == "streaming"
            owner = a.lsp._server
            assert owner is not None
            os.kill(owner.pid, signal.SIGSTOP)  # alive, but its heartbeat stops
            try:
                await poll_until(lambda: _is(b, session, "idle"), "B to take the stale lease over")
            finally:
                os.kill(owner.pid, signal.SIGCONT)
            # The owner wakes up, finds its lease gone and stops without touching history.
            result = await turn
            assert result["stopReason"] == "aborted"
            messages = await _transcript(b, session)
            assert [m["role"] for m in messages] == ["user", "system"]
            assert _markers(messages) == 1
            assert await _status(a, session) == "idle"
            assert _markers(await _transcript(a, session)) == 1


async def test_second_window_follows_the_turn_live_and_aborts_it(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    gate = threading.Event()
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            gated_stream(["one ", "two "], ["three ", "four"], gate),
            openai_stream(text=["never ", "finished"], ending="stall"),
        )
        async with (
            editor(workspace, home, env=FAST_HEARTBEAT) as a,
            editor(workspace, home, env=FAST_HEARTBEAT) as b,
        ):
            session = (await a.request(methods.START_SESSION, {"agentRef": "coder"}))["sessionId"]
            turn = asyncio.ensure_future(
                a.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "count"})
            )
            await a.wait_for_event(session, "agent:token")
            resumed = await b.request(methods.RESUME_SESSION, {"sessionId": session})
            after = resumed["lastEventSequence"]
            gate.set()
            await turn
            # B hears the rest of A's turn as it commits: same numbers, same order.
            await b.wait_for_event(session, "session:turn_completed")
            seen_by_b = [(e["sequenceNumber"], e["type"]) for e in b.events_of(session)]
            seen_by_a = [
                (e["sequenceNumber"], e["type"])
                for e in a.events_of(session)
                if e["sequenceNumber"] > after
            ]
            assert seen_by_b == seen_by_a
            tokens = "".join(e["token"] for e in b.events_of(session, "agent:token"))
            everything = "".join(e["token"] for e in a.events_of(session, "agent:token"))
            assert everything == "one two three four" and everything.endswith(tokens)
            assert tokens

            # A second turn that would never end: B's abort stops it through the database.
            second = asyncio.ensure_future(
                a.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "again"})
            )
            await b.wait_for_event(
                session, "agent:token", count=len(b.events_of(session, "agent:token")) + 1
            )
            aborted = await b.request(methods.ABORT_TURN, {"sessionId": session})
            assert aborted == {"aborted": True}
            result = await second
            assert result["stopReason"] == "aborted"
            await b.wait_for_event(session, "session:turn_completed", count=2)
            assert await _status(b, session) == "idle"
            messages = await _transcript(b, session)
            assert [m["role"] for m in messages] == ["user", "assistant"]  # rolled back


async def test_every_window_hears_session_list_changes(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(text=["hi"]))
        async with editor(workspace, home) as a, editor(workspace, home) as b:
            await b.request(methods.LIST_SESSIONS, {})  # B's engine is open and watching
            session = (await a.request(methods.START_SESSION, {"agentRef": "coder"}))["sessionId"]
            await b.wait_until(lambda: "created" in b.list_changes(session), "B to hear created")
            await b.request(methods.RENAME_SESSION, {"sessionId": session, "title": "named"})
            await a.wait_until(lambda: "renamed" in a.list_changes(session), "A to hear renamed")
            await a.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "hello"})
            await b.wait_until(lambda: "status" in b.list_changes(session), "B to hear the turn")
            await b.request(methods.DELETE_SESSION, {"sessionId": session})
            await a.wait_until(lambda: "deleted" in a.list_changes(session), "A to hear deleted")
            # Changes within one poll are merged; the order is the commit order.
            expected = ["created", "renamed", "status", "deleted"]
            assert _runs(a.list_changes(session)) == expected
            await b.wait_until(lambda: "deleted" in b.list_changes(session), "B to hear deleted")
            assert _runs(b.list_changes(session)) == expected


def _runs(kinds: list[str]) -> list[str]:
    """The kinds with repeats in a row folded into one."""
    return [kind for index, kind in enumerate(kinds) if index == 0 or kinds[index - 1] != kind]
