"""One harness for every end-to-end test: the real server process, a pytest-lsp client.

The client behaves like a small editor: it records ``relavium/sessionEvent`` notifications,
answers approvals with a scripted decision, applies ``workspace/applyEdit`` to its open
buffers (telling the server with ``didChange``, unsaved) or else to files on disk (and records
each edit), and declares the ``experimental.relavium`` capabilities it
implements. Providers are loopback HTTP servers configured through real config files.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cattrs import Converter
from lsprotocol import types
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features

from relavium_lsp.demo.edits import apply_text_edits, read_editor_text, save_editor_text
from relavium_lsp.server import methods
from tests.unit.llm.wire_servers import SSE_HEADERS, ScriptedResponse, openai_events

SHUTDOWN_GRACE_S = 5.0
WAIT_DEADLINE_S = 60.0  # for slow, shared machines; passing tests never get near it
GATE_TIMEOUT_S = 30.0
SERVER_COMMAND = [sys.executable, "-m", "relavium_lsp", "serve", "--log-level", "DEBUG"]


def _as_dicts(obj: dict[str, Any], cls: type[Any]) -> Any:
    return cls(**obj)


def dict_converter() -> Converter:
    """Keep custom params and results as plain dicts on the client side too."""
    converter: Converter = default_converter()  # type: ignore[no-untyped-call]
    for message_type in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(message_type, _as_dicts)
    return converter


@dataclass
class EditorClient:
    """The test's view of one connected editor."""

    lsp: LanguageClient
    workspace: Path
    events: list[dict[str, Any]] = field(default_factory=list)
    edits: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)
    # For each approval request: the event types the client had received when it arrived.
    events_before_approval: list[list[str]] = field(default_factory=list)
    opened_untitled: list[dict[str, Any]] = field(default_factory=list)
    # relavium/sessionsChanged notifications, one list of changes each.
    sessions_changed: list[list[dict[str, Any]]] = field(default_factory=list)
    # relavium/workspaceMemoryChanged notifications.
    memory_changed: list[dict[str, Any]] = field(default_factory=list)
    decision: str = "approve"
    # Runs when an approval request arrives, before the decision goes back (the user acting
    # in the editor while the prompt is up).
    approval_hook: Callable[[dict[str, Any]], None] | None = None
    apply_edits: bool = True
    fail_edits: bool = False  # answer workspace/applyEdit with a JSON-RPC error
    killed: bool = False
    # Open documents: uri -> (version, text), the editor's unsaved buffers.
    buffers: dict[str, tuple[int, str]] = field(default_factory=dict)
    save_after_edit: bool = True  # save a buffer the server edited (False: leave it unsaved)
    _event_arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def kill_server(self) -> None:
        """SIGKILL the server process (no shutdown, no flush) and wait until it is gone."""
        server = self.lsp._server
        assert server is not None
        server.send_signal(signal.SIGKILL)
        await server.wait()
        self.killed = True

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a custom request and return its (dict) result."""
        return await self.lsp.protocol.send_request_async(method, params)

    def list_changes(self, session_id: str) -> list[str]:
        """The kinds of every ``relavium/sessionsChanged`` entry about a session, in order."""
        return [
            change["kind"]
            for batch in self.sessions_changed
            for change in batch
            if change["sessionId"] == session_id
        ]

    def events_of(self, session_id: str, event_type: str | None = None) -> list[dict[str, Any]]:
        return [
            e
            for e in self.events
            if e["sessionId"] == session_id and (event_type is None or e["type"] == event_type)
        ]

    async def wait_for_event(
        self, session_id: str, event_type: str, count: int = 1
    ) -> dict[str, Any]:
        """Wait (without sleeping) until ``count`` events of a type have arrived."""
        while len(self.events_of(session_id, event_type)) < count:
            self._event_arrived.clear()
            await self._event_arrived.wait()
        return self.events_of(session_id, event_type)[count - 1]

    async def wait_until(self, predicate: Callable[[], bool], what: str) -> None:
        """Let the client run until ``predicate()`` holds (checked every 10 ms), or fail."""
        deadline = asyncio.get_running_loop().time() + WAIT_DEADLINE_S
        while not predicate():
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await asyncio.sleep(0.01)

    def record_event(self, params: dict[str, Any]) -> None:
        """Record a notification the moment it is read.

        Synchronous on purpose: pygls runs an ``async`` handler as a task, so a server request
        read in the same chunk (an approval right after the events that explain it) would be
        handled before the event was recorded — the order the editor saw would be lost.
        """
        self.events.append(params)
        self._event_arrived.set()

    def open_document(self, path: Path, language: str = "python") -> str:
        uri = path.as_uri()
        text = read_editor_text(path) or ""
        self.buffers[uri] = (1, text)
        self.lsp.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id=language, version=1, text=text
                )
            )
        )
        return uri

    def type_into(self, uri: str, text: str) -> None:
        """Replace an open buffer's text without saving it (the user typing)."""
        version = self.buffers[uri][0] + 1
        self.buffers[uri] = (version, text)
        self.lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text)],
            )
        )

    def buffer_text(self, uri: str) -> str:
        return self.buffers[uri][1]

    def apply_workspace_edit(self, edit: types.WorkspaceEdit) -> None:
        """Apply an edit like an editor: an open buffer in memory (didChange, then saved
        unless ``save_after_edit`` is off), any other file on disk."""
        for change in edit.document_changes or []:
            if isinstance(change, types.TextDocumentEdit) and change.text_document.uri in (
                self.buffers
            ):
                uri = change.text_document.uri
                plain = [e for e in change.edits if isinstance(e, types.TextEdit)]
                self.type_into(uri, apply_text_edits(self.buffer_text(uri), plain))
                if self.save_after_edit:
                    save_editor_text(Path(uri.removeprefix("file://")), self.buffer_text(uri))
            else:
                _apply_to_disk(types.WorkspaceEdit(document_changes=[change]))


async def poll_until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Ask ``check`` again and again until it holds, or fail after the harness deadline.

    For state another process changes (the shared database): nothing here can wait on it.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_DEADLINE_S
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def client_capabilities(
    *,
    relavium: dict[str, bool] | None = None,
    create_files: bool = True,
    show_document: bool = True,
) -> types.ClientCapabilities:
    """What the test editor declares; the flags take away what plain clients lack."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[
                    types.ResourceOperationKind.Create,
                    types.ResourceOperationKind.Delete,
                ]
                if create_files
                else None,
            ),
            workspace_folders=True,
        ),
        window=types.WindowClientCapabilities(
            work_done_progress=True,
            show_document=types.ShowDocumentClientCapabilities(support=True)
            if show_document
            else None,
        ),
        experimental={
            "relavium": relavium
            if relavium is not None
            else {"approvals": True, "openUntitled": True, "editorState": True}
        },
    )


def _apply_to_disk(edit: types.WorkspaceEdit) -> None:
    """Apply create-file + ranged text edits the way an editor would (then save).

    Like an editor, it follows symlinks, hides a byte-order mark from the text and keeps it
    on save, and leaves line endings alone (the server must compute positions on exactly
    the text the file holds).
    """
    for change in edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            path = Path(change.uri.removeprefix("file://"))
            if not path.exists():
                save_editor_text(path, "")
        elif isinstance(change, types.DeleteFile):
            Path(change.uri.removeprefix("file://")).unlink(missing_ok=True)
        elif isinstance(change, types.TextDocumentEdit):
            path = Path(change.text_document.uri.removeprefix("file://"))
            text = read_editor_text(path) or ""
            plain = [e for e in change.edits if isinstance(e, types.TextEdit)]
            assert len(plain) == len(change.edits)
            # Every range refers to the text before the edit, as in LSP.
            save_editor_text(path, apply_text_edits(text, plain))


@asynccontextmanager
async def editor(
    workspace: Path,
    home: Path,
    *,
    relavium: dict[str, bool] | None = None,
    initialization_options: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    capabilities: types.ClientCapabilities | None = None,
) -> AsyncIterator[EditorClient]:
    """Start ``relavium-lsp serve``, initialize it on ``workspace``, shut it down after."""
    lsp = LanguageClient(converter_factory=dict_converter)
    register_lsp_features(lsp)
    client = EditorClient(lsp=lsp, workspace=workspace)

    @lsp.feature(methods.SESSION_EVENT)
    def on_event(params: dict[str, Any]) -> None:
        client.record_event(params)

    @lsp.feature(methods.SESSIONS_CHANGED)
    def on_sessions_changed(params: dict[str, Any]) -> None:
        client.sessions_changed.append(params["changes"])

    @lsp.feature(methods.WORKSPACE_MEMORY_CHANGED)
    def on_memory_changed(params: dict[str, Any]) -> None:
        client.memory_changed.append(params)

    @lsp.feature(methods.REQUEST_APPROVAL)
    def on_approval(params: dict[str, Any]) -> dict[str, Any]:
        client.approvals.append(params)
        client.events_before_approval.append([e["type"] for e in client.events])
        if client.approval_hook is not None:
            client.approval_hook(params)
        return {"decision": client.decision}

    @lsp.feature(methods.OPEN_UNTITLED)
    def on_open_untitled(params: dict[str, Any]) -> dict[str, Any]:
        client.opened_untitled.append(params)
        return {"opened": True}

    @lsp.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        client.edits.append(params)
        if client.fail_edits:
            raise RuntimeError("the document is read-only")
        if not client.apply_edits:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="the user said no")
        client.apply_workspace_edit(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    server_env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "RELAVIUM_HOME": str(home / ".relavium"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        "XDG_CONFIG_HOME": str(home / "xdg-config"),
        **(env or {}),
    }
    await lsp.start_io(*SERVER_COMMAND, env=server_env)
    try:
        await lsp.initialize_session(
            types.InitializeParams(
                capabilities=capabilities or client_capabilities(relavium=relavium),
                client_info=types.ClientInfo(name="relavium-e2e"),
                workspace_folders=[
                    types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)
                ],
                initialization_options=initialization_options or {},
            )
        )
        yield client
        if not client.killed:
            await lsp.shutdown_session()
    finally:
        await _stop(lsp)


async def _stop(lsp: LanguageClient) -> None:
    """End the server even when the test failed half-way (no hanging on a live process)."""
    server = lsp._server
    if server is not None and server.returncode is None:
        try:
            await asyncio.wait_for(server.wait(), SHUTDOWN_GRACE_S)
        except TimeoutError:
            server.terminate()
    await lsp.stop()


def gated_stream(first: list[str], rest: list[str], gate: threading.Event) -> ScriptedResponse:
    """A completion that sends ``first`` tokens, then waits for ``gate`` before the rest."""
    events = openai_events(text=[*first, *rest], usage=(50, 6))
    # events: role chunk, one chunk per token, then the finish/usage/[DONE] chunks
    split = 1 + len(first)

    def body() -> Iterator[bytes]:
        yield from events[:split]
        gate.wait(GATE_TIMEOUT_S)
        yield from events[split:]

    return ScriptedResponse(headers=SSE_HEADERS, body=body())


def make_git_workspace(root: Path, branch: str = "feature/chat") -> Path:
    """A real git repository with one committed source file, on ``branch``."""
    root.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root)}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)

    git("init", "-q", "-b", branch)
    (root / "app.py").write_text(
        "def add(a, b):\n    return a - b\n\n\nprint(add(2, 3))\n", encoding="utf-8"
    )
    git("add", "app.py")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init")
    return root


def configure_loopback_provider(
    home: Path,
    workspace: Path,
    base_url: str,
    *,
    model: str = "gpt-4o-mini",
    introspection: bool = False,
) -> None:
    """Global config with a loopback OpenAI-compatible provider, and an agent that uses it.

    A scripted model answers calls in order, so automatic introspection passes (model calls
    in the background) are off unless a test asks for them (``introspection``): they would
    take answers scripted for turns.
    """
    relavium_home = home / ".relavium"
    relavium_home.mkdir(parents=True, exist_ok=True)
    (relavium_home / "config.toml").write_text(
        f'[providers.loop]\nkind = "openai"\nbase_url = "{base_url}"\n'
        "allow_local_endpoint = true\ntimeout_s = 10\n"
        + ("" if introspection else "\n[introspection]\nenabled = false\n"),
        encoding="utf-8",
    )
    agents = workspace / ".relavium" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "coder.agent.yaml").write_text(
        "id: coder\nname: Coder\ndescription: edits code\n"
        f"model: {model}\nprovider: loop\n"
        'system_prompt: "You edit code in {{ctx.workingDir}}."\n'
        "tools: [read_file, write_file, edit_file, list_directory, git_status]\n",
        encoding="utf-8",
    )
