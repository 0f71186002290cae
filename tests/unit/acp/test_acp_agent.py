"""The ACP agent in this process, driven by the official SDK client over a real socket pair.

Scenarios the subprocess tests do not spend a process on: error mapping, stop reasons,
embedded context and unsaved buffers reaching the model, the permission outcomes, and the
scope jail holding whichever way files are accessed.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import SessionInfoUpdate

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.unit.acp.acp_client import RecordingClient, connect_in_process
from tests.unit.llm.wire_servers import (
    LoopbackServer,
    ScriptedToolCall,
    openai_error,
    openai_stream,
)

ORIGINAL = "def add(a, b):\n    return a - b\n\n\nprint(add(2, 3))\n"


def call(call_id: str, name: str, **arguments: object) -> ScriptedToolCall:
    return ScriptedToolCall(id=call_id, name=name, arguments=json.dumps(arguments))


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_git_workspace(tmp_path / "repo", branch="main")


async def test_requests_before_initialize_and_bad_params_are_clean_errors(
    workspace: Path, isolated_home: Path
) -> None:
    async with connect_in_process(RecordingClient(), initialized=False) as (conn, _):
        with pytest.raises(RequestError) as early:
            await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert early.value.code == -32600
    client = RecordingClient()
    async with connect_in_process(client) as (conn, _):
        with pytest.raises(RequestError) as relative:
            await conn.new_session(cwd="repo", mcp_servers=[])
        assert relative.value.code == -32004
        assert "absolute" in str(relative.value)
        with pytest.raises(RequestError) as missing:
            await conn.new_session(cwd=str(workspace / "nope"), mcp_servers=[])
        assert "not a directory" in str(missing.value)
        with pytest.raises(RequestError) as unknown:
            await conn.prompt(session_id="no-such-session", prompt=[text("hi")])
        assert unknown.value.code == -32001
        assert unknown.value.data == {"code": "session_not_found"}
        with pytest.raises(RequestError) as bad_meta:
            await conn.new_session(
                cwd=str(workspace), mcp_servers=[], relavium={"agentRef": "x", "sneaky": 1}
            )
        assert bad_meta.value.code == -32602
        with pytest.raises(RequestError) as unknown_agent:
            await conn.new_session(cwd=str(workspace), mcp_servers=[], relavium={"agentRef": "x"})
        assert unknown_agent.value.data == {"code": "validation"}
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        with pytest.raises(RequestError) as audio:
            await conn.prompt(
                session_id=sid,
                prompt=[{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}],
            )
        assert "audio" in str(audio.value)
        with pytest.raises(RequestError) as mode:
            await conn.set_session_mode(session_id=sid, mode_id="fast")
        assert mode.value.data == {"code": "validation"}
        assert "known: ask, auto_edits, never_ask" in str(mode.value)
        with pytest.raises(RequestError) as option:
            await conn.set_config_option(session_id=sid, config_id="speed", value="max")
        assert "unknown config option 'speed'" in str(option.value)
        with pytest.raises(RequestError) as model:
            await conn.set_config_option(session_id=sid, config_id="model", value="evil/gpt")
        assert "unknown model 'evil/gpt'" in str(model.value)
        with pytest.raises(RequestError) as boolean:
            await conn.set_config_option(session_id=sid, config_id="approval", value=True)
        assert boolean.value.data == {"code": "validation"}
        with pytest.raises(RequestError) as fork:
            await conn.fork_session(session_id=sid, cwd=str(workspace))
        assert fork.value.code == -32601


async def test_a_cwd_at_home_is_refused_with_what_to_do_until_meta_allows_it(
    isolated_home: Path,
) -> None:
    async with connect_in_process(RecordingClient()) as (conn, _):
        with pytest.raises(RequestError) as refused:
            await conn.new_session(cwd=str(isolated_home), mcp_servers=[])
        assert refused.value.code == -32007
        assert refused.value.data == {
            "code": "broad_working_dir",
            "workingDir": str(isolated_home),
            "reason": "the home directory",
        }
        assert "Open a project folder" in str(refused.value)
        assert '"allowBroadWorkingDir": true' in str(refused.value)
        allowed = await conn.new_session(
            cwd=str(isolated_home), mcp_servers=[], relavium={"allowBroadWorkingDir": True}
        )
        assert allowed.session_id


async def test_embedded_context_and_unsaved_buffers_reach_the_model(
    workspace: Path, isolated_home: Path
) -> None:
    unsaved = "def add(a, b):\n    return a + b  # unsaved fix\n"
    client = RecordingClient(buffers={str(workspace / "app.py"): unsaved})
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        model.script(
            openai_stream(tool_calls=[call("c1", "read_file", path="app.py")]),
            openai_stream(text=["It adds now."]),
        )
        async with connect_in_process(client, fs=True) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            result = await conn.prompt(
                session_id=sid,
                prompt=[
                    text("Review this"),
                    {
                        "type": "resource",
                        "resource": {
                            "uri": (workspace / "util.py").as_uri(),
                            "text": "x = 1  # ```fenced```\n",
                            "mimeType": "text/x-python",
                        },
                    },
                    {"type": "resource_link", "uri": "https://example.com/spec", "name": "spec"},
                ],
            )
            assert result.stop_reason == "end_turn"
    user = model.requests[0].json()["messages"][-1]
    flattened = json.dumps(user)
    assert "Review this" in flattened
    assert "````" in flattened and "x = 1" in flattened
    assert "https://example.com/spec" in flattened
    assert len(model.requests) == 2  # the link was named, never fetched
    tool_message = model.requests[1].json()["messages"][-1]
    assert tool_message["role"] == "tool" and "unsaved fix" in tool_message["content"]
    assert client.reads == [str(workspace / "app.py")]


async def test_the_jail_applies_to_client_fs_too(workspace: Path, isolated_home: Path) -> None:
    secret = workspace.parent / "secret.txt"
    secret.write_text("top secret\n", encoding="utf-8")
    os.symlink(secret, workspace / "link.txt")
    client = RecordingClient(decision="allow-once")
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        model.script(
            openai_stream(
                tool_calls=[
                    call("r1", "read_file", path="../secret.txt"),
                    call("r2", "read_file", path="link.txt"),
                    call("r3", "read_file", path="/etc/hostname"),
                    call("w1", "write_file", path="link.txt", content="pwned\n"),
                    call("w2", "write_file", path=".git/hooks/pre-commit", content="evil\n"),
                ]
            ),
            openai_stream(text=["ok"]),
        )
        async with connect_in_process(client, fs=True) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            result = await conn.prompt(session_id=sid, prompt=[text("try")])
            assert result.stop_reason == "end_turn"
            for call_id in ("r1", "r2", "r3", "w1", "w2"):
                events = client.tool_events(sid, call_id)
                assert events[-1].status == "failed", call_id
                assert not events[0].locations, call_id
    assert client.reads == [] and client.writes == [] and client.permissions == []
    assert secret.read_text(encoding="utf-8") == "top secret\n"
    assert "top secret" not in json.dumps(model.requests[1].json())


async def test_reject_is_a_failed_call_and_the_turn_goes_on(
    workspace: Path, isolated_home: Path
) -> None:
    client = RecordingClient(decision="reject-once")
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        model.script(
            openai_stream(tool_calls=[call("w", "write_file", path="app.py", content="x\n")]),
            openai_stream(text=["Understood, leaving it."]),
        )
        async with connect_in_process(client, fs=False) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            result = await conn.prompt(session_id=sid, prompt=[text("change it")])
            assert result.stop_reason == "end_turn"
            assert [e.status for e in client.tool_events(sid, "w")] == [
                "pending",
                "in_progress",
                "failed",
            ]
    assert (workspace / "app.py").read_text(encoding="utf-8") == ORIGINAL
    assert "rejected" in model.requests[1].json()["messages"][-1]["content"]


async def test_a_cancelled_permission_outcome_cancels_the_turn(
    workspace: Path, isolated_home: Path
) -> None:
    client = RecordingClient(decision="cancelled")
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        model.script(
            openai_stream(tool_calls=[call("w", "write_file", path="app.py", content="x\n")]),
            openai_stream(text=["never requested"]),
        )
        async with connect_in_process(client, fs=False) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            result = await conn.prompt(session_id=sid, prompt=[text("change it")])
            assert result.stop_reason == "cancelled"
    assert len(model.requests) == 1
    assert (workspace / "app.py").read_text(encoding="utf-8") == ORIGINAL


async def test_stopping_during_a_permission_never_reports_the_call_completed(
    workspace: Path, isolated_home: Path
) -> None:
    # Issue 37's honest states over ACP: the user stops the turn while a write waits for
    # permission; the call ends "failed" (it did not happen) and the prompt says "cancelled".
    client = RecordingClient(decision="cancel")
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        model.script(
            openai_stream(tool_calls=[call("w", "write_file", path="app.py", content="x\n")]),
            openai_stream(text=["never requested"]),
        )
        async with connect_in_process(client, fs=False) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            result = await conn.prompt(session_id=sid, prompt=[text("change it")])
            assert result.stop_reason == "cancelled"
            statuses = [event.status for event in client.tool_events(sid, "w")]
            assert statuses[-1] == "failed" and "completed" not in statuses
    assert (workspace / "app.py").read_text(encoding="utf-8") == ORIGINAL


async def test_a_second_prompt_while_one_runs_is_refused_not_dropped(
    workspace: Path, isolated_home: Path
) -> None:
    client = RecordingClient()
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        # The first answer streams a token, then stays open: its turn is still running.
        model.script(openai_stream(text=["thinking"], ending="stall"))
        async with connect_in_process(client) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            first = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text("one")]))
            assert await asyncio.to_thread(model.wait_for_requests, 1)
            with pytest.raises(RequestError) as refused:
                await conn.prompt(session_id=sid, prompt=[text("two")])
            assert (refused.value.data or {}).get("code") == "session_busy"
            await conn.cancel(session_id=sid)
            assert (await first).stop_reason == "cancelled"
            assert len(model.requests) == 1, "the refused prompt never reached the model"


async def test_stop_reasons_and_typed_errors(workspace: Path, isolated_home: Path) -> None:
    project = workspace / ".relavium" / "project.toml"
    project.parent.mkdir(parents=True, exist_ok=True)
    project.write_text("[chat]\nmax_turns = 3\n", encoding="utf-8")
    client = RecordingClient()
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        model.script(
            openai_stream(text=["cut"], finish_reason="length"),
            openai_stream(text=["no"], finish_reason="content_filter"),
            openai_error(401, "bad key sk-live-should-not-leak", error_type="auth_error"),
        )
        async with connect_in_process(client) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            first = await conn.prompt(session_id=sid, prompt=[text("one")])
            assert first.stop_reason == "max_tokens"
            assert first.usage is not None and first.usage.total_tokens > 0
            second = await conn.prompt(session_id=sid, prompt=[text("two")])
            assert second.stop_reason == "refusal"
            with pytest.raises(RequestError) as failed:
                await conn.prompt(session_id=sid, prompt=[text("three")])
            assert failed.value.code == -32012
            assert failed.value.data == {"code": "provider_auth", "retryable": False}
            assert "sk-live-should-not-leak" not in str(failed.value)
            # Past the cap of three turns: ends loudly, without asking the model.
            third = await conn.prompt(session_id=sid, prompt=[text("four")])
            assert third.stop_reason == "max_turn_requests"
            assert len(model.requests) == 3
            # Only the first prompt named the session.
            titles = [u.title for u in client.updates_of(sid, SessionInfoUpdate)]
            assert titles == ["one"]


async def test_the_cost_cap_pause_is_asked_as_a_permission(
    workspace: Path, isolated_home: Path
) -> None:
    client = RecordingClient(decision="allow-once")
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        config = isolated_home / ".relavium" / "config.toml"  # the user's own: not a project's
        config.write_text(
            config.read_text(encoding="utf-8")
            + '\n[chat]\nmax_cost_microcents = 1\non_exceed = "pause_for_approval"\n',
            encoding="utf-8",
        )
        model.script(openai_stream(text=["within budget, approved"], usage=(10, 1)))
        async with connect_in_process(client) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            result = await conn.prompt(session_id=sid, prompt=[text("one")])
            assert result.stop_reason == "end_turn"
            # Asked before any egress (the estimate already passes a 1-microcent cap).
            (asked,) = client.permissions
            call_id = asked.tool_call.tool_call_id
            assert call_id.startswith("budget-")
            assert [o.kind for o in asked.options] == ["allow_once", "allow_always", "reject_once"]
            # The client was told about the call before it was asked, then how it ended.
            assert [e.status for e in client.tool_events(sid, call_id)] == [
                "pending",
                "completed",
            ]
            assert client.message_text(sid) == "within budget, approved"
    assert len(model.requests) == 1


async def test_a_wrong_database_key_is_a_clear_error_and_the_agent_lives_on(
    workspace: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with connect_in_process(RecordingClient()) as (conn, _):
        await conn.new_session(cwd=str(workspace), mcp_servers=[])
    monkeypatch.setenv("RELAVIUM_DB_KEY", "ab" * 32)
    async with connect_in_process(RecordingClient()) as (conn, _):
        for _attempt in range(2):
            with pytest.raises(RequestError) as refused:
                await conn.list_sessions()
            assert "key" in str(refused.value).lower()
            assert "ab" * 32 not in str(refused.value)
