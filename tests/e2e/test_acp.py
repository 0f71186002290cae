"""``relavium-lsp acp`` as a subprocess, driven by the official ACP SDK's client side.

Covers initialize, session/new, prompts against a loopback provider (text, a write with
permission through the client's fs or the disk, cancellation mid-stream and mid-permission),
session/list, session/load in a new process, and sessions shared with the LSP surface.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp.schema import (
    AgentMessageChunk,
    FileEditToolCallContent,
    SessionInfoUpdate,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import configure_loopback_provider, editor, make_git_workspace
from tests.unit.acp.acp_client import RecordingClient, spawn_acp
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

ORIGINAL = "def add(a, b):\n    return a - b\n\n\nprint(add(2, 3))\n"
FIXED = "def add(a, b):\n    return a + b\n\n\nprint(add(2, 3))\n"


def write_call(call_id: str, path: str, content: str) -> ScriptedToolCall:
    return ScriptedToolCall(
        id=call_id, name="write_file", arguments=json.dumps({"path": path, "content": content})
    )


def statuses(events: list[ToolCallStart | ToolCallProgress]) -> list[str | None]:
    return [event.status for event in events]


async def test_initialize_text_prompt_and_a_write_through_the_clients_fs(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo", branch="feature/acp")
    home = tmp_path / "home"
    client = RecordingClient(decision="allow-once")
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(text=["The function ", "subtracts."], usage=(40, 5)),
            openai_stream(tool_calls=[write_call("call-w", "app.py", FIXED)], usage=(60, 20)),
            openai_stream(text=["Fixed."], usage=(90, 2)),
        )
        async with spawn_acp(home, client, fs=True) as (conn, answer):
            capabilities = answer.agent_capabilities
            assert capabilities is not None and capabilities.load_session is True
            session_capabilities = capabilities.session_capabilities
            assert session_capabilities is not None
            assert session_capabilities.list is not None
            assert session_capabilities.resume is not None
            assert session_capabilities.close is not None
            prompt_capabilities = capabilities.prompt_capabilities
            assert prompt_capabilities is not None and prompt_capabilities.embedded_context

            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            sid = session.session_id
            assert session.field_meta == {
                "relavium": {"agentRef": "coder", "model": "gpt-4o-mini", "gitRef": "feature/acp"}
            }
            first = await conn.prompt(
                session_id=sid,
                prompt=[{"type": "text", "text": "Why does add() look wrong?"}],
            )
            assert first.stop_reason == "end_turn"
            assert client.message_text(sid) == "The function subtracts."
            titles = [u.title for u in client.updates_of(sid, SessionInfoUpdate)]
            assert titles == ["Why does add() look wrong?"]
            usage = client.updates_of(sid, UsageUpdate)
            assert usage and usage[-1].used == 45 and usage[-1].size > 0
            sent = model.requests[0].json()
            assert sent["messages"][-1]["content"] == "Why does add() look wrong?"

            second = await conn.prompt(
                session_id=sid, prompt=[{"type": "text", "text": "Fix it please."}]
            )
            assert second.stop_reason == "end_turn"
            # The permission request showed the exact change as a diff.
            (asked,) = client.permissions
            assert asked.tool_call.tool_call_id == "call-w"
            assert [option.kind for option in asked.options] == [
                "allow_once",
                "allow_always",
                "reject_once",
            ]
            (preview,) = asked.tool_call.content or []
            assert isinstance(preview, FileEditToolCallContent)
            assert preview.old_text == ORIGINAL and preview.new_text == FIXED
            # The write went to the client's buffer, not to disk behind the editor's back.
            assert client.writes == [(str(workspace / "app.py"), FIXED)]
            assert (workspace / "app.py").read_text(encoding="utf-8") == ORIGINAL
            events = client.tool_events(sid, "call-w")
            assert statuses(events) == ["pending", "in_progress", "completed"]
            start = events[0]
            assert isinstance(start, ToolCallStart)
            assert start.kind == "edit" and start.title == "Write app.py"
            assert [location.path for location in start.locations or []] == [
                str(workspace / "app.py")
            ]
            diff = [c for c in events[-1].content or [] if isinstance(c, FileEditToolCallContent)]
            assert diff and diff[0].new_text == FIXED and diff[0].old_text == ORIGINAL
            assert client.message_text(sid).endswith("Fixed.")
            tool_message = model.requests[2].json()["messages"][-1]
            assert tool_message["role"] == "tool" and "app.py" in tool_message["content"]


async def test_a_client_without_fs_gets_a_jail_checked_disk_write(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    client = RecordingClient(decision="allow-always")
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(
                tool_calls=[
                    write_call("call-1", "app.py", FIXED),
                    write_call("call-2", "notes.txt", "remember\n"),
                    write_call("call-3", "../escape.txt", "outside\n"),
                ],
                usage=(60, 20),
            ),
            openai_stream(text=["Done."], usage=(90, 2)),
        )
        async with spawn_acp(home, client, fs=False) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            result = await conn.prompt(session_id=sid, prompt=[{"type": "text", "text": "go"}])
            assert result.stop_reason == "end_turn"
    assert (workspace / "app.py").read_text(encoding="utf-8") == FIXED
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "remember\n"
    assert not (tmp_path / "escape.txt").exists()
    assert client.writes == [] and client.reads == []
    # "Always allow" for the workspace directory covered the second write; the escape was
    # refused by the jail before anyone was asked.
    assert [asked.tool_call.tool_call_id for asked in client.permissions] == ["call-1"]
    assert statuses(client.tool_events(sid, "call-3"))[-1] == "failed"
    assert statuses(client.tool_events(sid, "call-2")) == ["pending", "in_progress", "completed"]


async def test_cancel_mid_stream_answers_cancelled_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    client = RecordingClient()
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(text=["slow ", "story "], ending="stall", done=False, usage=None),
            openai_stream(text=["Back again."], usage=(30, 3)),
        )
        async with spawn_acp(home, client) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            prompt = asyncio.create_task(
                conn.prompt(session_id=sid, prompt=[{"type": "text", "text": "tell a story"}])
            )
            await client.wait_until(lambda: "story" in client.message_text(sid))
            await conn.cancel(session_id=sid)
            result = await prompt
            assert result.stop_reason == "cancelled"
            assert await model.wait_for_disconnect(0)
            again = await conn.prompt(session_id=sid, prompt=[{"type": "text", "text": "hi"}])
            assert again.stop_reason == "end_turn"
            assert client.message_text(sid).endswith("Back again.")
            # The aborted turn was rolled out of the history the model sees.
            roles = [m["role"] for m in model.requests[1].json()["messages"]]
            assert roles == ["system", "user"]


async def test_cancel_while_a_permission_is_pending(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    client = RecordingClient(decision="cancel")
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(tool_calls=[write_call("call-w", "app.py", FIXED)], usage=(60, 20)),
            openai_stream(text=["must never be asked for"], usage=(1, 1)),
        )
        async with spawn_acp(home, client) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            result = await conn.prompt(session_id=sid, prompt=[{"type": "text", "text": "fix"}])
            assert result.stop_reason == "cancelled"
            assert len(client.permissions) == 1
            assert client.writes == []
            assert statuses(client.tool_events(sid, "call-w"))[-1] == "failed"
    assert (workspace / "app.py").read_text(encoding="utf-8") == ORIGINAL
    assert len(model.requests) == 1


async def test_list_and_load_in_a_new_process_replays_history(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(text=["Looking."], tool_calls=[write_call("call-w", "app.py", FIXED)]),
            openai_stream(text=["All fixed."], usage=(90, 2)),
            openai_stream(text=["You asked me to fix add()."], usage=(120, 6)),
        )
        first_client = RecordingClient(decision="allow-once")
        async with spawn_acp(home, first_client, fs=False) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[{"type": "text", "text": "Fix add()"}])

        second_client = RecordingClient()
        async with spawn_acp(home, second_client, fs=False) as (conn, _):
            listed = await conn.list_sessions(cwd=str(workspace))
            assert [info.session_id for info in listed.sessions] == [sid]
            assert listed.sessions[0].title == "Fix add()"
            assert listed.sessions[0].cwd == str(workspace)
            searched = await conn.list_sessions(relavium={"query": "fixed"})
            assert [info.session_id for info in searched.sessions] == [sid]
            assert (await conn.list_sessions(relavium={"query": "zebra"})).sessions == []

            await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
            replayed = second_client.updates_of(sid)
            kinds = [type(update).__name__ for update in replayed]
            assert kinds == [
                "UserMessageChunk",
                "AgentMessageChunk",
                "ToolCallStart",
                "ToolCallProgress",
                "AgentMessageChunk",
                "SessionInfoUpdate",
                "AvailableCommandsUpdate",
            ]
            user = replayed[0]
            assert isinstance(user, UserMessageChunk) and user.content.text == "Fix add()"
            assert isinstance(replayed[1], AgentMessageChunk)
            assert replayed[1].content.text == "Looking."
            call = replayed[2]
            assert isinstance(call, ToolCallStart) and call.kind == "edit"
            assert call.raw_input["path"] == "app.py"
            assert FIXED not in json.dumps(call.raw_input)  # contents are summarized
            assert isinstance(replayed[3], ToolCallProgress) and replayed[3].status == "completed"

            more = await conn.prompt(
                session_id=sid, prompt=[{"type": "text", "text": "What did I ask?"}]
            )
            assert more.stop_reason == "end_turn"
            history = model.requests[2].json()["messages"]
            assert history[1] == {"role": "user", "content": "Fix add()"}


async def test_sessions_are_shared_with_the_lsp_surface(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        client = RecordingClient()
        async with spawn_acp(home, client) as (conn, _):
            acp_sid = (
                await conn.new_session(
                    cwd=str(workspace), mcp_servers=[], relavium={"title": "From Zed"}
                )
            ).session_id

        async with editor(workspace, home) as lsp:
            listed = await lsp.request(methods.LIST_SESSIONS, {"workspace": str(workspace)})
            assert [(s["id"], s["title"]) for s in listed["sessions"]] == [(acp_sid, "From Zed")]
            started = await lsp.request(methods.START_SESSION, {"title": "From VS Code"})
            lsp_sid = started["sessionId"]

        async with spawn_acp(home, RecordingClient()) as (conn, _):
            listed_acp = await conn.list_sessions(cwd=str(workspace))
            assert [info.session_id for info in listed_acp.sessions] == [lsp_sid, acp_sid]
            assert listed_acp.sessions[0].title == "From VS Code"
            await conn.close_session(session_id=acp_sid)
            ended = await conn.list_sessions(relavium={"status": "ended"})
            assert [info.session_id for info in ended.sessions] == [acp_sid]
            await conn.resume_session(session_id=acp_sid, cwd=str(workspace))
            assert (await conn.list_sessions(relavium={"status": "ended"})).sessions == []
