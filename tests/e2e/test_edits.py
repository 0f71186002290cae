"""Precise edits over the real server: ``edit_file`` on unsaved buffers, ranged edits, diffs.

The editor is the pytest-lsp harness (``lsp_harness.editor``): it keeps open buffers in
memory and applies ``workspace/applyEdit`` to them the way an editor does, with LSP's rule
that every range refers to the text before the edit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import (
    EditorClient,
    configure_loopback_provider,
    editor,
    make_git_workspace,
)
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

ORIGINAL = "def add(a, b):\n    return a - b\n\n\nprint(add(2, 3))\n"
UNSAVED = "# an unsaved note\n" + ORIGINAL


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    workspace = make_git_workspace(tmp_path / "repo")
    return workspace, tmp_path / "home"


def edit_call(path: str, *pairs: tuple[str, str]) -> ScriptedToolCall:
    edits = [{"old": old, "new": new} for old, new in pairs]
    return ScriptedToolCall(
        id="e1", name="edit_file", arguments=json.dumps({"path": path, "edits": edits})
    )


def last_tool_message(model: LoopbackServer) -> str:
    told = [m for m in model.requests[-1].json()["messages"] if m["role"] == "tool"]
    return str(told[-1]["content"])


async def start(client: EditorClient) -> str:
    started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
    return str(started["sessionId"])


def text_edits(edit: types.ApplyWorkspaceEditParams) -> list[types.TextEdit]:
    changes = edit.edit.document_changes or []
    return [
        text_edit
        for change in changes
        if isinstance(change, types.TextDocumentEdit)
        for text_edit in change.edits
        if isinstance(text_edit, types.TextEdit)
    ]


async def test_a_multi_replacement_edit_on_an_unsaved_buffer_arrives_as_ranged_edits(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(
                tool_calls=[edit_call("app.py", ("a - b", "a + b"), ("add(2, 3)", "add(2, 4)"))]
            ),
            openai_stream(text=["Done."]),
        )
        async with editor(workspace, home) as client:
            client.save_after_edit = False
            uri = client.open_document(workspace / "app.py")
            client.type_into(uri, UNSAVED)
            session = await start(client)
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "fix"})

            expected = UNSAVED.replace("a - b", "a + b").replace("add(2, 3)", "add(2, 4)")
            assert client.buffer_text(uri) == expected
            assert (workspace / "app.py").read_text(encoding="utf-8") == ORIGINAL  # unsaved
            [edit] = client.edits
            ranged = text_edits(edit)
            # Two small edits inside their lines, not one whole-document replacement.
            assert [(e.range.start.line, e.range.end.line, e.new_text) for e in ranged] == [
                (2, 2, "+"),
                (5, 5, "4"),
            ]
            [approval] = client.approvals
            diff = approval["diff"]
            assert diff["path"] == "app.py" and diff["created"] is False
            assert "-    return a - b\n+    return a + b\n" in diff["unified"]
            assert diff["stat"] == {"added": 2, "removed": 2}
            assert diff["hunks"] == [{"oldStart": 1, "oldLines": 6, "newStart": 1, "newLines": 6}]
            [event] = client.events_of(session, "agent:approval_requested")
            assert event["preview"] == {"path": "app.py"}
            assert event["diffStat"] == {"added": 2, "removed": 2}
            assert "unified" not in json.dumps(event)
            assert "Edited app.py: 2 replacements" in last_tool_message(model)


async def test_a_non_matching_old_is_a_clear_error_and_nothing_changes(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(
                tool_calls=[
                    edit_call("app.py", ("a - b", "a + b"), ("return a * b\n\n\nprint", "x"))
                ]
            ),
            openai_stream(text=["Sorry."]),
        )
        async with editor(workspace, home) as client:
            uri = client.open_document(workspace / "app.py")
            client.type_into(uri, UNSAVED)
            session = await start(client)
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "fix"})

            assert client.edits == [] and client.approvals == []
            assert client.buffer_text(uri) == UNSAVED
            told = last_tool_message(model)
            assert "edit 2 of 2: `old` was not found, so nothing was changed" in told
            assert "line 1 of `old` ('return a * b') is not in app.py" in told
            [result] = client.events_of(session, "agent:tool_result")
            assert result["success"] is False


async def test_a_plain_client_reads_the_diff_and_write_file_sends_a_ranged_edit(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    new_text = ORIGINAL.replace("a - b", "a + b")
    write = ScriptedToolCall(
        id="w1", name="write_file", arguments=json.dumps({"path": "app.py", "content": new_text})
    )
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(tool_calls=[write]), openai_stream(text=["ok"]))
        async with editor(workspace, home, relavium={}) as client:
            asked: list[str] = []

            @client.lsp.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
            def approve(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
                asked.append(params.message)
                return types.MessageActionItem(title="Approve")

            session = await start(client)
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "fix"})

            [message] = asked
            assert message.startswith("Relavium wants to run write_file (fs_write): app.py")
            assert "(+1 -1 lines)" in message
            assert "--- a/app.py\n+++ b/app.py\n" in message
            assert "-    return a - b\n+    return a + b\n" in message
            [edit] = client.edits
            [ranged] = text_edits(edit)
            assert ranged.range.start == types.Position(line=1, character=13)
            assert ranged.new_text == "+"
            assert (workspace / "app.py").read_text(encoding="utf-8") == new_text
            results: list[dict[str, Any]] = client.events_of(session, "agent:tool_result")
            assert results[0]["success"] is True


@pytest.mark.parametrize("open_in_editor", [False, True], ids=["on disk", "open"])
async def test_a_crlf_file_with_a_bom_keeps_its_bytes(
    setup: tuple[Path, Path], open_in_editor: bool
) -> None:
    """The reported attack (issue 35 item 3): positions on the exact text, endings kept."""
    workspace, home = setup
    path = workspace / "crlf.txt"
    path.write_bytes(b"\xef\xbb\xbfalpha\r\nbeta\r\ngamma\r\n")
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(
                tool_calls=[edit_call("crlf.txt", ("beta", "BETA"), ("gamma\n", "gamma\nnew\n"))]
            ),
            openai_stream(text=["Done."]),
        )
        async with editor(workspace, home) as client:
            if open_in_editor:
                client.open_document(path, "plaintext")
            session = await start(client)
            result = await client.request(
                methods.SEND_MESSAGE, {"sessionId": session, "text": "shout"}
            )
            assert result["stopReason"] == "stop", result
            assert "Edited crlf.txt" in last_tool_message(model)
            assert path.read_bytes() == b"\xef\xbb\xbfalpha\r\nBETA\r\ngamma\r\nnew\r\n"
            [edit] = client.edits[-1:]
            assert all("\r\r" not in e.new_text for e in text_edits(edit))
