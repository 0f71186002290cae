"""Modes, config options, slash commands, session/delete and the per-client update gate.

The agent runs in this process, driven by the PyPI SDK's client side over a socket pair.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import (
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionInfoUpdate,
    UsageUpdate,
)

from relavium_lsp.paths import history_db_path, relavium_home
from relavium_lsp.store.db.keys import resolve_db_key
from relavium_lsp.store.rows.workspace_memory import write_memory
from relavium_lsp.store.sessions import SessionStore
from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.unit.acp.acp_client import RecordingClient, connect_in_process, delete_session
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

FIXED = "def add(a, b):\n    return a + b\n"


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def _write_memory(workspace: Path, text: str) -> None:
    """Another window's save, straight into the shared encrypted database."""
    store = SessionStore.open(history_db_path(), resolve_db_key(relavium_home()))
    try:
        write_memory(
            store.connection, os.path.realpath(workspace), text, base_revision=0, source="user"
        )
    finally:
        store.close()


def write_call(call_id: str) -> ScriptedToolCall:
    arguments = json.dumps({"path": "app.py", "content": FIXED})
    return ScriptedToolCall(id=call_id, name="write_file", arguments=arguments)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_git_workspace(tmp_path / "repo", branch="main")


async def test_an_early_schema_client_gets_only_the_early_update_kinds(
    workspace: Path, isolated_home: Path
) -> None:
    client = RecordingClient()
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        model.script(openai_stream(text=["Hello."], usage=(40, 5)))
        async with connect_in_process(client, early=True) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            result = await conn.prompt(session_id=sid, prompt=text("Say hello"))
            assert result.stop_reason == "end_turn"
            await conn.set_session_mode(session_id=sid, mode_id="never_ask")
            await conn.set_config_option(session_id=sid, config_id="approval", value="ask")
            usage = await conn.prompt(session_id=sid, prompt=text("/usage"))
            assert usage.stop_reason == "end_turn"
            empty = await conn.prompt(session_id=sid, prompt=text("/memory"))
            assert empty.stop_reason == "end_turn"
            _write_memory(workspace, "## Build\n- make test\n")
            await conn.prompt(session_id=sid, prompt=text("/memory"))
    assert client.message_text(sid).startswith("Hello.")
    assert "40 input and 5 output tokens" in client.message_text(sid)
    assert "no long-term memory yet" in client.message_text(sid)
    assert "Workspace memory (revision 1, by user):\n\n## Build\n- make test" in (
        client.message_text(sid)
    )
    kinds = {type(update) for update in client.updates_of(sid)}
    assert SessionInfoUpdate not in kinds and UsageUpdate not in kinds
    assert ConfigOptionUpdate not in kinds
    assert AvailableCommandsUpdate in kinds
    modes = [u.current_mode_id for u in client.updates_of(sid, CurrentModeUpdate)]
    assert modes == ["ask"]


async def test_modes_and_config_options_stay_in_step_and_rule_the_approvals(
    workspace: Path, isolated_home: Path
) -> None:
    client = RecordingClient(decision="reject-once")
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        model.script(
            openai_stream(tool_calls=[write_call("w1")]),
            openai_stream(text=["Done."]),
        )
        async with connect_in_process(client, fs=False) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            sid = session.session_id
            assert session.modes is not None and session.modes.current_mode_id == "ask"
            options = {option.id: option for option in session.config_options or []}
            assert options["approval"].current_value == "ask"
            assert options["model"].category == "model"
            await conn.set_session_mode(session_id=sid, mode_id="never_ask")
            await client.wait_until(lambda: bool(client.updates_of(sid, ConfigOptionUpdate)))
            (announced,) = client.updates_of(sid, ConfigOptionUpdate)
            values = {o.id: o.current_value for o in announced.config_options}
            assert values == {"model": "loop/gpt-4o-mini", "approval": "never_ask"}
            # never_ask: the write runs although this client would reject every prompt.
            result = await conn.prompt(session_id=sid, prompt=text("fix it"))
            assert result.stop_reason == "end_turn"
            assert client.permissions == []
    assert (workspace / "app.py").read_text(encoding="utf-8") == FIXED


async def test_slash_commands_answer_in_the_chat_and_never_reach_the_model(
    workspace: Path, isolated_home: Path
) -> None:
    client = RecordingClient()
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        model.script(*(openai_stream(text=[f"answer {n}"], usage=(30, 3)) for n in range(4)))
        async with connect_in_process(client) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            await client.wait_until(lambda: bool(client.updates_of(sid, AvailableCommandsUpdate)))
            (commands,) = client.updates_of(sid, AvailableCommandsUpdate)
            assert {c.name for c in commands.available_commands} == {
                "compact",
                "title",
                "usage",
                "model",
                "rewind",
                "memory",
                "replay",
            }
            for prompt in ("one", "two", "three", "four"):
                await conn.prompt(session_id=sid, prompt=text(prompt))
            for command in (
                "/replay recorded",
                "/replay sideways",
                "/title  Parser   work ",
                "/compact trim",
                "/compact sideways",
                "/model nowhere/none",
                "/model",
            ):
                answer = await conn.prompt(session_id=sid, prompt=text(command))
                assert answer.stop_reason == "end_turn"
            listed = await conn.list_sessions(cwd=str(workspace))
            assert listed.sessions[0].title == "Parser work"
    said = client.message_text(sid)
    assert "Renamed this chat to “Parser work”." in said
    assert "Trimmed the history the model sees" in said
    assert "/compact takes 'summarize' or 'trim'" in said
    assert "/model failed: unknown model 'nowhere/none'" in said
    assert "→ loop/gpt-4o-mini" in said
    # /replay: into a new session, from the recordings alone (the model is not asked).
    assert "Replayed 4 turn(s) into session " in said and "identical to the original" in said
    assert "Usage: /replay" in said
    titles = [u.title for u in client.updates_of(sid, SessionInfoUpdate)]
    assert titles == ["one", "Parser work"]
    assert len(model.requests) == 4  # the commands never asked the model


async def test_delete_removes_the_session_and_refuses_unknown_ids(
    workspace: Path, isolated_home: Path
) -> None:
    async with connect_in_process(RecordingClient()) as (conn, answer):
        assert answer is not None and answer.agent_capabilities is not None
        capabilities = answer.agent_capabilities.session_capabilities
        assert capabilities is not None and capabilities.delete is not None
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        assert await delete_session(conn, sid) == {}
        assert (await conn.list_sessions(cwd=str(workspace))).sessions == []
        with pytest.raises(RequestError) as again:
            await delete_session(conn, sid)
        assert again.value.data == {"code": "session_not_found"}
        for gone in ("still there?", "/usage"):
            with pytest.raises(RequestError) as prompt:
                await conn.prompt(session_id=sid, prompt=text(gone))
            assert prompt.value.data == {"code": "session_not_found"}
