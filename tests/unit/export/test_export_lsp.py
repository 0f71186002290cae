"""``relavium/exportSession`` and ``relavium/forkSession`` over a real stdio server."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from relavium_lsp.export.workflow_yaml import parse_workflow

REPO = Path(__file__).resolve().parents[3]
DB_KEY = "5e" * 32


@dataclass
class Editor:
    client: LanguageClient
    workspace: Path
    untitled: list[Any] = field(default_factory=list)

    @property
    def shown(self) -> list[str]:
        return [params.uri for params in self.client.shown_documents]

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        return await self.client.protocol.send_request_async(method, params)

    async def start(self, open_untitled: bool) -> str:
        capabilities = types.ClientCapabilities(
            window=types.WindowClientCapabilities(
                show_document=types.ShowDocumentClientCapabilities(support=True)
            ),
            experimental={"relavium": {"openUntitled": open_untitled}},
        )
        await self.client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities,
                root_uri=self.workspace.as_uri(),
                workspace_folders=[
                    types.WorkspaceFolder(uri=self.workspace.as_uri(), name="workspace")
                ],
                initialization_options={"clientName": "pytest"},
            )
        )
        started = await self.request(
            "relavium/startSession",
            {"title": "Export me", "context": {"workingDir": str(self.workspace)}},
        )
        session_id = str(started.sessionId)
        settled = await self.request(
            "relavium/sendMessage", {"sessionId": session_id, "text": "Hello there"}
        )
        assert settled.stopReason == "stop"
        return session_id


@pytest.fixture
async def editor(tmp_path: Path) -> AsyncIterator[Editor]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    home = tmp_path / "home"
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "relavium_lsp", "serve"],
        server_env={
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(home),
            "RELAVIUM_HOME": str(home / ".relavium"),
            "RELAVIUM_DB_KEY": DB_KEY,
            "PYTHONPATH": str(REPO),
        },
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    opened = Editor(client=client, workspace=workspace)

    @client.feature("relavium/openUntitled")
    def open_untitled(params: Any) -> dict[str, bool]:
        opened.untitled.append(params)
        return {"opened": True}

    yield opened
    await client.shutdown_session()
    await client.stop()


async def test_export_opens_an_untitled_document_when_the_client_can(editor: Editor) -> None:
    session_id = await editor.start(open_untitled=True)
    result = await editor.request("relavium/exportSession", {"sessionId": session_id})
    assert result.opened is True and result.format == "workflow"
    assert [node.id for node in parse_workflow(result.content).nodes] == [
        "input",
        "turn-1",
        "output",
    ]
    (request,) = editor.untitled
    assert (request.language, request.content) == ("yaml", result.content)
    assert request.title == "export-me.relavium.yaml"
    assert result.suggestedPath == str(
        editor.workspace / ".relavium" / "exports" / "export-me.relavium.yaml"
    )
    assert editor.shown == []
    assert not (editor.workspace / ".relavium").exists()
    events = await editor.request(
        "relavium/sessionEvents", {"sessionId": session_id, "afterSequence": 0}
    )
    exported = [e for e in events.events if e.type == "session:exported"]
    assert [e.workflowPath for e in exported] == ["untitled"]


async def test_export_writes_and_shows_a_file_otherwise(editor: Editor) -> None:
    session_id = await editor.start(open_untitled=False)
    result = await editor.request(
        "relavium/exportSession", {"sessionId": session_id, "format": "jsonl"}
    )
    written = editor.workspace / ".relavium" / "exports" / f"{session_id}.jsonl"
    assert result.opened is True and result.suggestedPath == str(written)
    assert written.read_text(encoding="utf-8") == result.content
    assert editor.shown == [written.as_uri()] and editor.untitled == []
    quiet = await editor.request("relavium/exportSession", {"sessionId": session_id, "open": False})
    assert quiet.opened is False and len(editor.shown) == 1
    # Beside the JSONL file: its tool cassette (seed 004), named in the answer.
    cassette = written.parent / f"{session_id}.tool-cassette.jsonl"
    assert result.toolCassettePath == str(cassette)
    assert cassette.read_text(encoding="utf-8").startswith('{"format":"relavium-tool-cassette/1.0"')
    assert sorted(p.name for p in written.parent.iterdir()) == sorted([cassette.name, written.name])


async def test_fork_and_its_errors(editor: Editor) -> None:
    session_id = await editor.start(open_untitled=False)
    forked = await editor.request(
        "relavium/forkSession", {"sessionId": session_id, "atSequence": 1}
    )
    transcript = await editor.request(
        "relavium/getTranscript", {"sessionId": str(forked.sessionId)}
    )
    assert [m.role for m in transcript.messages] == ["user"]
    with pytest.raises(JsonRpcException) as invalid:
        await editor.request("relavium/forkSession", {"sessionId": session_id, "atSequence": 0})
    assert invalid.value.code == -32602
    with pytest.raises(JsonRpcException) as missing:
        await editor.request("relavium/forkSession", {"sessionId": "nope", "atSequence": 1})
    assert missing.value.code == -32001
    with pytest.raises(JsonRpcException) as not_visible:
        await editor.request("relavium/forkSession", {"sessionId": session_id, "atSequence": 50})
    assert not_visible.value.code == -32004


def test_the_requests_are_mirrored_as_commands() -> None:
    from relavium_lsp.server.app import create_server

    commands = create_server().protocol.fm.commands
    assert {"relavium.exportSession", "relavium.forkSession"} <= set(commands)
