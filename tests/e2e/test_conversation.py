"""A full conversation over LSP: context detection, streaming, an edit, approval, resume."""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types
from ruamel.yaml import YAML

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import configure_loopback_provider, editor, make_git_workspace
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

FIXED = "def add(a, b):\n    return a + b\n\n\nprint(add(2, 3))\n"


async def test_full_conversation_then_resume_in_a_new_process(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo", branch="feature/chat")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(
                text=["The ", "function ", "subtracts ", "instead ", "of ", "adding."],
                usage=(50, 6),
            ),
            openai_stream(
                tool_calls=[
                    ScriptedToolCall(
                        id="call-1",
                        name="write_file",
                        arguments=json.dumps({"path": "app.py", "content": FIXED}),
                    )
                ],
                usage=(80, 20),
            ),
            openai_stream(text=["Fixed: ", "it ", "now ", "adds."], usage=(120, 4)),
        )
        async with editor(workspace, home) as client:
            uri = client.open_document(workspace / "app.py")
            client.lsp.protocol.notify(
                methods.EDITOR_STATE,
                {
                    "uri": uri,
                    "selection": {
                        "start": {"line": 0, "character": 0},
                        "end": {"line": 1, "character": 16},
                    },
                },
            )
            started = await client.request(
                methods.START_SESSION, {"agentRef": "coder", "title": "Fix add"}
            )
            session_id = started["sessionId"]
            context = started["context"]
            assert context["workingDir"] == str(workspace)
            assert context["activeFile"] == "app.py"
            assert context["selection"] == {"file": "app.py", "startLine": 1, "endLine": 2}
            assert context["gitRef"] == "feature/chat"
            assert started["model"] == "gpt-4o-mini"

            first = await client.request(
                methods.SEND_MESSAGE,
                {"sessionId": session_id, "text": "What is wrong with the selection?"},
            )
            assert first["stopReason"] == "stop"
            assert first["text"] == "The function subtracts instead of adding."
            # the selected lines reached the model in the system prompt
            system = model.requests[0].json()["messages"][0]["content"]
            assert "return a - b" in system

            second = await client.request(
                methods.SEND_MESSAGE, {"sessionId": session_id, "text": "Fix it."}
            )
            assert second["stopReason"] == "stop", second
            assert second["text"] == "Fixed: it now adds."
            # the write arrived as one workspace edit, approved through the custom request
            assert len(client.approvals) == 1
            assert client.approvals[0]["toolId"] == "write_file"
            assert client.approvals[0]["preview"] == {"path": "app.py"}
            seen = client.events_before_approval[0]
            assert seen[-2:] == ["agent:tool_call", "agent:approval_requested"]  # why, then ask
            assert len(client.edits) == 1
            edit = client.edits[0]
            assert edit.label is not None and "Fix add" in edit.label
            assert (workspace / "app.py").read_text(encoding="utf-8") == FIXED

            events = client.events_of(session_id)
            seqs = [e["sequenceNumber"] for e in events]
            assert seqs == list(range(1, len(seqs) + 1))
            tokens = "".join(e["token"] for e in client.events_of(session_id, "agent:token"))
            assert tokens == first["text"] + second["text"]
            assert [e["type"] for e in events].count("session:turn_completed") == 2

            transcript = await client.request(methods.GET_TRANSCRIPT, {"sessionId": session_id})
            roles = [m["role"] for m in transcript["messages"]]
            assert roles == ["user", "assistant", "user", "assistant", "tool", "assistant"]

            exported = await client.request(methods.EXPORT_SESSION, {"sessionId": session_id})
            assert exported["opened"] is True
            assert client.opened_untitled[0]["language"] == "yaml"
            assert client.opened_untitled[0]["content"] == exported["content"]
            workflow = YAML(typ="safe").load(exported["content"])
            assert [n["id"] for n in workflow["nodes"]] == ["input", "turn-1", "turn-2", "output"]
            assert (
                client.events_of(session_id, "session:exported")[-1]["workflowPath"] == "untitled"
            )
            # the user saves the untitled document somewhere; the server notices whose it is
            saved = workspace / "fix-add.relavium.yaml"
            saved.write_text(exported["content"], encoding="utf-8")
            client.lsp.text_document_did_save(
                types.DidSaveTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=saved.as_uri()),
                    text=exported["content"],
                )
            )
            await client.wait_for_event(session_id, "session:exported", count=2)
            assert client.events_of(session_id, "session:exported")[-1]["workflowPath"] == str(
                saved
            )

        async with editor(workspace, home) as again:
            resumed = await again.request(methods.RESUME_SESSION, {"sessionId": session_id})
            assert resumed["session"]["title"] == "Fix add"
            assert resumed["session"]["exportedWorkflowPath"] == str(saved)
            assert [m["role"] for m in resumed["messages"]] == roles
            assert resumed["lastEventSequence"] >= seqs[-1]
            backlog = await again.request(
                methods.SESSION_EVENTS, {"sessionId": session_id, "afterSequence": 0}
            )
            assert [e["sequenceNumber"] for e in backlog["events"]][: len(seqs)] == seqs
            listed = await again.request(methods.LIST_SESSIONS, {"query": "subtracts"})
            assert [s["id"] for s in listed["sessions"]] == [session_id]
