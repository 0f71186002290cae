"""Plain LSP clients as people run them: request timeouts, refused edits, missing capabilities.

The client here is pytest-lsp declaring no ``experimental.relavium`` extension (or only what
a test needs), like Emacs' eglot or any other editor without a relavium plugin.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from relavium_lsp.export.workflow_yaml import parse_workflow
from relavium_lsp.server import methods
from tests.e2e.lsp_harness import (
    EditorClient,
    client_capabilities,
    configure_loopback_provider,
    editor,
    gated_stream,
    make_git_workspace,
)
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

CLIENT_TIMEOUT_S = 2.0  # eglot's is 10 s; many clients have one


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    workspace = make_git_workspace(tmp_path / "repo")
    return workspace, tmp_path / "home"


def write_call(path: str, content: str) -> ScriptedToolCall:
    return ScriptedToolCall(
        id="w1", name="write_file", arguments=json.dumps({"path": path, "content": content})
    )


def last_tool_message(model: LoopbackServer) -> str:
    """What the model was told about its last tool call."""
    told = [m for m in model.requests[-1].json()["messages"] if m["role"] == "tool"]
    return str(told[-1]["content"])


async def start(client: EditorClient) -> str:
    started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
    return str(started["sessionId"])


def tool_results(transcript: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool result stored in a transcript page."""
    return [
        part
        for message in transcript["messages"]
        for part in message["content"]
        if part["type"] == "tool_result"
    ]


async def code_actions(
    client: EditorClient, uri: str, selection_end: types.Position
) -> list[types.Command]:
    """The code actions for a selection from the start of the document (commands only: the
    test client does not take code action literals)."""
    actions = await client.lsp.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=selection_end),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert all(isinstance(action, types.Command) for action in actions or [])
    return [action for action in actions or [] if isinstance(action, types.Command)]


@pytest.mark.parametrize("refusal", ["applied_false", "error_answer"])
async def test_a_refused_edit_is_a_failed_tool_result_in_the_transcript(
    setup: tuple[Path, Path], refusal: str
) -> None:
    workspace, home = setup
    original = (workspace / "app.py").read_text(encoding="utf-8")
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(tool_calls=[write_call("app.py", "x = 1\n")]),
            openai_stream(text=["I could not change it."]),
        )
        async with editor(workspace, home, relavium={}) as client:

            @client.lsp.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
            def approve(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
                return types.MessageActionItem(title="Approve")

            client.apply_edits = refusal != "applied_false"
            client.fail_edits = refusal == "error_answer"
            session = await start(client)
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "edit"})

            assert len(client.edits) == 1
            assert (workspace / "app.py").read_text(encoding="utf-8") == original
            result = client.events_of(session, "agent:tool_result")[0]
            assert result["success"] is False and result["errorCode"] == "tool_failed"
            why = "the user said no" if refusal == "applied_false" else "the document is read-only"
            # what the model was told, and what the stored transcript keeps
            told = last_tool_message(model)
            assert "The file was not changed." in told and why in told
            transcript = await client.request(methods.GET_TRANSCRIPT, {"sessionId": session})
            (stored,) = tool_results(transcript)
            assert stored["isError"] is True
            assert "refused the edit to app.py" in stored["result"] and why in stored["result"]


async def test_a_write_over_a_buffer_the_user_changed_after_the_read_is_refused(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    read = ScriptedToolCall(id="r1", name="read_file", arguments=json.dumps({"path": "app.py"}))
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(tool_calls=[read]),
            openai_stream(tool_calls=[write_call("app.py", "rewritten\n")]),
            openai_stream(text=["ok"]),
        )
        async with editor(workspace, home) as client:
            uri = client.open_document(workspace / "app.py")

            def user_types(_: dict[str, Any]) -> None:
                client.lsp.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                        content_changes=[types.TextDocumentContentChangeWholeDocument("# mine\n")],
                    )
                )

            client.approval_hook = user_types
            session = await start(client)
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "rewrite"})

            assert len(client.approvals) == 1 and client.edits == []
            result = client.events_of(session, "agent:tool_result")[-1]
            assert result["toolId"] == "write_file" and result["success"] is False
            told = last_tool_message(model)
            assert "changed in the editor after the agent read it" in told
            assert "The file was not changed." in told


async def test_requests_that_time_out_after_2_s_complete_a_5_s_turn(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    slow = dataclasses.replace(
        openai_stream(text=[f"part {n} " for n in range(10)]), piece_delay_s=0.5
    )
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(slow)
        async with editor(workspace, home, relavium={}) as client:

            async def request(method: str, params: dict[str, Any]) -> Any:
                return await asyncio.wait_for(client.request(method, params), CLIENT_TIMEOUT_S)

            session = await start(client)
            client.lsp.progress_reports.setdefault("turn-1", [])
            accepted = await request(
                methods.SEND_MESSAGE,
                {"sessionId": session, "text": "tell me", "wait": False, "workDoneToken": "turn-1"},
            )
            assert accepted["accepted"] is True and accepted["userMessageSequence"] == 1
            started = client.events_of(session, "session:turn_started")
            assert [e["sequenceNumber"] for e in started] == [accepted["turnStartedSequence"]]
            # the server answers other requests while the turn runs
            listed = await request(methods.LIST_SESSIONS, {})
            assert [s["status"] for s in listed["sessions"]] == ["streaming"]
            assert not client.events_of(session, "session:turn_completed")

            completed = await client.wait_for_event(session, "session:turn_completed")
            assert completed["stopReason"] == "stop"
            tokens = "".join(e["token"] for e in client.events_of(session, "agent:token"))
            assert tokens == "".join(f"part {n} " for n in range(10))
            reports = client.lsp.progress_reports["turn-1"]
            await client.wait_until(
                lambda: any(isinstance(r, types.WorkDoneProgressEnd) for r in reports),
                "the progress to end",
            )
            assert isinstance(reports[0], types.WorkDoneProgressBegin)
            assert [r.message for r in reports[1:-1]] == ["writing…"]
            assert reports[-1].message == "done"
            # the old, waiting form still works for clients that want it
            model.script(openai_stream(text=["again"]))
            waited = await client.request(
                methods.SEND_MESSAGE, {"sessionId": session, "text": "once more"}
            )
            assert waited["text"] == "again" and waited["stopReason"] == "stop"


async def test_a_new_file_the_client_cannot_create_is_refused_before_the_prompt(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(tool_calls=[write_call("notes/new.txt", "hello\n")]),
            openai_stream(text=["Please create it."]),
        )
        capabilities = client_capabilities(relavium={}, create_files=False)
        async with editor(workspace, home, capabilities=capabilities) as client:
            asked: list[types.ShowMessageRequestParams] = []

            @client.lsp.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
            def approve(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
                asked.append(params)
                return types.MessageActionItem(title="Approve")

            session = await start(client)
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "write"})

            assert asked == [] and client.edits == []
            assert not (workspace / "notes").exists()
            assert client.events_of(session, "agent:approval_requested") == []
            result = client.events_of(session, "agent:tool_result")[0]
            assert result["success"] is False
            told = last_tool_message(model)
            assert "cannot create files" in told and "notes/new.txt was not written" in told


async def test_an_export_with_no_way_to_open_it_writes_nothing_in_the_workspace(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(text=["hi"]))
        capabilities = client_capabilities(relavium={}, show_document=False)
        async with editor(workspace, home, capabilities=capabilities) as client:
            session = await start(client)
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "hello"})
            before = sorted(p.relative_to(workspace) for p in workspace.rglob("*"))
            result = await client.request(methods.EXPORT_SESSION, {"sessionId": session})

            assert sorted(p.relative_to(workspace) for p in workspace.rglob("*")) == before
            assert parse_workflow(result["content"]).nodes[0].id == "input"
            saved = Path(result["savedPath"])
            assert saved.parent == home / ".relavium" / "exports"
            assert saved.read_text(encoding="utf-8") == result["content"]
            assert result["opened"] is False
            shown = [m.message for m in client.lsp.messages]
            assert result["message"] in shown and str(saved) in result["message"]


async def test_code_actions_and_settings_reach_the_chat_from_the_editors_menus(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        gate = threading.Event()
        model.script(gated_stream(["It "], ["subtracts."], gate))
        async with editor(workspace, home, relavium={}) as client:
            client.lsp.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings={"relavium": {"defaultAgent": "coder"}})
            )
            uri = client.open_document(workspace / "app.py")
            actions = await code_actions(client, uri, types.Position(line=2, character=0))
            titles = [action.title for action in actions]
            assert titles == ["Ask Relavium", "Explain (Relavium)", "Export this chat (Relavium)"]
            explain, export = actions[1], actions[2]
            try:
                answer = await client.lsp.workspace_execute_command_async(
                    types.ExecuteCommandParams(command=explain.command, arguments=explain.arguments)
                )
                # answered while the model is held mid-answer: the command did not wait
                session = answer["sessionId"]
                assert answer["turn"]["accepted"] is True
                assert not client.events_of(session, "session:turn_completed")
            finally:
                gate.set()
            await client.wait_for_event(session, "session:turn_completed")
            await client.wait_until(
                lambda: any("It subtracts." in m.message for m in client.lsp.messages),
                "the answer as a message",
            )
            sent = model.requests[0].json()["messages"][-1]["content"]
            assert "Explain what this code does" in sent and "app.py, lines 1-2" in sent
            assert "```py\ndef add(a, b):\n    return a - b\n```" in sent
            started = client.events_of(session, "session:started")[0]
            assert started["agentRef"] == "coder"  # from the changed settings
            assert started["context"]["activeFile"] == "app.py"

            exported = await client.lsp.workspace_execute_command_async(
                types.ExecuteCommandParams(command=export.command, arguments=export.arguments)
            )
            assert exported["format"] == "workflow" and "It subtracts." in exported["content"]
            # a command is no way around the tool jail: only open documents are quoted
            outside = {**explain.arguments[0], "uri": "file:///etc/passwd"}
            with pytest.raises(JsonRpcException, match="is not open in the editor"):
                await client.lsp.workspace_execute_command_async(
                    types.ExecuteCommandParams(command=explain.command, arguments=[outside])
                )
            assert len(model.requests) == 1
            client.lsp.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings={"relavium": {"approval": "often"}})
            )
            await client.request(methods.LIST_AGENTS)
            warnings = [
                m.message for m in client.lsp.messages if m.type == types.MessageType.Warning
            ]
            assert len(warnings) == 1 and "settings.relavium" in warnings[0]
            assert "approval" in warnings[0]


async def test_clients_with_their_own_chat_are_offered_no_code_actions(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    async with editor(workspace, home) as client:
        uri = client.open_document(workspace / "app.py")
        assert await code_actions(client, uri, types.Position(line=1, character=0)) == []
