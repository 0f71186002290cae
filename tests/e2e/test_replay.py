"""Seeds 002-004 over the real server (issue 39): replay from the editor, the session source,
get-or-create, and the ``inactive`` status.

One scripted model (a loopback OpenAI-compatible server) answers the live turn; the replays
never reach it: their model answers come from the session's own recordings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import (
    EditorClient,
    configure_loopback_provider,
    editor,
    make_git_workspace,
)
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

ASK = "What does app.py define?"


async def _session(client: EditorClient, session_id: str) -> dict[str, object]:
    resumed = await client.request(methods.RESUME_SESSION, {"sessionId": session_id})
    return dict(resumed["session"])


async def _one_tool_turn(client: EditorClient, model: LoopbackServer) -> str:
    model.script(
        openai_stream(
            tool_calls=[ScriptedToolCall("r1", "read_file", json.dumps({"path": "app.py"}))]
        ),
        openai_stream(text=["app.py ", "defines add."]),
    )
    started = await client.request(
        methods.START_SESSION, {"agentRef": "coder", "metadata": {"panel": "left"}}
    )
    assert started["created"] is True
    session_id = str(started["sessionId"])
    done = await client.request(methods.SEND_MESSAGE, {"sessionId": session_id, "text": ASK})
    assert done["stopReason"] == "stop"
    return session_id


async def test_replay_session_from_the_editor(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        async with editor(workspace, home) as client:
            session_id = await _one_tool_turn(client, model)
            asked = len(model.requests)

            with pytest.raises(JsonRpcInvalidParams, match="liveTools"):
                await client.request(
                    methods.REPLAY_SESSION, {"sessionId": session_id, "liveTools": ["read_file"]}
                )
            started = await client.request(
                methods.REPLAY_SESSION, {"sessionId": session_id, "toolReplayMode": "recorded"}
            )
            replay_id = started["replaySessionId"]
            assert replay_id != session_id and started["turnsToReplay"] == 1
            assert "report" not in started
            # The replay streams what a live turn streams, then says how it went.
            completed = await client.wait_for_event(replay_id, "session:replay_completed")
            report = completed["report"]
            assert report["matches"] is True, report["differences"]
            assert (report["recordedToolCalls"], report["liveToolCalls"]) == (1, 0)
            streamed = {event["type"] for event in client.events_of(replay_id)}
            assert {"agent:token", "agent:tool_call", "agent:tool_result"} <= streamed
            assert "session:turn_completed" in streamed
            assert len(model.requests) == asked  # the model was never asked again

            replay = await _session(client, replay_id)
            assert replay["source"] == {
                "kind": "replay",
                "interactive": False,
                "triggerId": session_id,
            }
            transcript = await client.request(methods.GET_TRANSCRIPT, {"sessionId": replay_id})
            assert [m["role"] for m in transcript["messages"]] == [
                "user",
                "assistant",
                "tool",
                "assistant",
            ]
            # With wait: the answer carries the report; auto re-reads the (read-only) file.
            waited = await client.request(
                methods.REPLAY_SESSION, {"sessionId": session_id, "wait": True}
            )
            assert waited["report"]["matches"] is True
            assert (waited["report"]["mode"], waited["report"]["liveToolCalls"]) == ("auto", 1)

            # Every replay wrote one audit row, listed from the session and from the replay.
            audit = (await client.request(methods.LIST_REPLAYS, {"sessionId": session_id}))[
                "replays"
            ]
            assert [(row["replaySessionId"], row["mode"], row["status"]) for row in audit] == [
                (replay_id, "recorded", "matched"),
                (waited["replaySessionId"], "auto", "matched"),
            ]
            mine = await client.request(methods.LIST_REPLAYS, {"sessionId": replay_id})
            assert [row["id"] for row in mine["replays"]] == [audit[0]["id"]]

            # Messages by agent: the coder wrote the answers and the tool result, not the ask.
            by_coder = await client.request(
                methods.GET_TRANSCRIPT, {"sessionId": session_id, "agentSlug": "coder"}
            )
            assert [m["role"] for m in by_coder["messages"]] == ["assistant", "tool", "assistant"]
            nobody = await client.request(
                methods.GET_TRANSCRIPT, {"sessionId": session_id, "agentSlug": "lead"}
            )
            assert nobody["messages"] == []


async def test_session_source_get_or_create_and_inactive(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        options = {"clientName": "Neovim relavium.nvim"}
        async with editor(workspace, home, initialization_options=options) as client:
            session_id = await _one_tool_turn(client, model)
            source = (await _session(client, session_id))["source"]
            assert isinstance(source, dict)
            assert (source["kind"], source["interactive"]) == ("neovim", True)

            # Get-or-create: the id reopens it, merges the metadata, keeps the source.
            again = await client.request(
                methods.START_SESSION,
                {
                    "sessionId": session_id,
                    "metadata": {"theme": "dark"},
                    "source": {"kind": "cli"},
                },
            )
            assert (again["sessionId"], again["created"]) == (session_id, False)
            reopened = await _session(client, session_id)
            assert reopened["metadata"] == {"panel": "left", "theme": "dark"}
            assert reopened["source"] == source
            with pytest.raises(JsonRpcInvalidParams, match="metadata"):
                await client.request(
                    methods.START_SESSION,
                    {"sessionId": session_id, "metadata": {"big": "x" * 17_000}},
                )

            # A source as seed 002's object, or as its kind alone (what older clients send).
            given = {"kind": "cli", "interactive": False, "platform": "ci", "type": "direct"}
            scripted = await client.request(
                methods.START_SESSION, {"agentRef": "coder", "source": given}
            )
            assert (await _session(client, scripted["sessionId"]))["source"] == given
            plain = await client.request(
                methods.START_SESSION, {"agentRef": "coder", "source": "my-script"}
            )
            assert (await _session(client, plain["sessionId"]))["source"] == {
                "kind": "my-script",
                "interactive": True,
            }
            with pytest.raises(JsonRpcInvalidParams):
                await client.request(methods.START_SESSION, {"source": {"interactive": True}})

    # Nobody touched them for the idle time (a few milliseconds here): listed as inactive.
    idle_time = {"RELAVIUM_INACTIVE_AFTER_DAYS": "0.0000001"}
    async with editor(workspace, home, env=idle_time) as client:
        listed = (await client.request(methods.LIST_SESSIONS, {}))["sessions"]
        assert {s["status"] for s in listed} == {"inactive"} and len(listed) == 3
        only = await client.request(methods.LIST_SESSIONS, {"status": "inactive"})
        assert len(only["sessions"]) == 3
        assert (await _session(client, session_id))["status"] == "idle"
    async with editor(workspace, home) as client:
        statuses = {
            s["id"]: s["status"]
            for s in (await client.request(methods.LIST_SESSIONS, {}))["sessions"]
        }
        assert statuses[session_id] == "idle"  # reopened: touched again
