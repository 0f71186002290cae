"""A small editor made of pygls' language client: what the demo uses to drive the server.

It starts ``relavium-lsp serve`` as a subprocess and speaks LSP to it over stdio, behaving
like an editor: it keeps open documents, applies ``workspace/applyEdit`` to its buffers and
saves them, answers ``relavium/requestApproval`` with a scripted decision, shows what
``relavium/openUntitled`` sends, and renders every ``relavium/sessionEvent`` as it arrives.
Custom params and results stay plain dicts (the server's own converter does the same).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from relavium_lsp import __version__
from relavium_lsp._compat.pygls import client_process
from relavium_lsp.atomic_write import atomic_write_text
from relavium_lsp.contracts.wire import ApprovalDecision
from relavium_lsp.demo.edits import PlannedWrite, UnsupportedEdit, plan_workspace_edit
from relavium_lsp.demo.render import Console, one_line
from relavium_lsp.server import methods
from relavium_lsp.server.core import relavium_converter

_log = logging.getLogger(__name__)
STDERR_TAIL_LINES = 20
SHUTDOWN_GRACE_S = 10.0
# Passed through to the server; everything else (API keys, RELAVIUM_DB_KEY, …) is withheld.
_PASSTHROUGH_ENV = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "PYTHONPATH",
    "SYSTEMROOT",
)
NULL_KEYRING = "keyring.backends.null.Keyring"


class ServerProblem(RuntimeError):
    """The server process failed to start, answered with an error or went away."""


def server_environment(relavium_home: Path, log_level: str | None) -> dict[str, str]:
    """The demo server's environment: a private home and no keychain, no inherited secrets.

    The null keyring backend keeps the demo away from the user's OS keychain entirely (the
    real history key lives there under the same name), so the server keeps its database key
    in ``<relavium_home>/history.key``.
    """
    env = {name: os.environ[name] for name in _PASSTHROUGH_ENV if name in os.environ}
    env.update(RELAVIUM_HOME=str(relavium_home), PYTHON_KEYRING_BACKEND=NULL_KEYRING)
    if log_level:
        env["RELAVIUM_LOG_LEVEL"] = log_level
    return env


@dataclass
class OpenDocument:
    """An editor buffer."""

    version: int
    text: str


@dataclass
class EditorRecord:
    """What the editor saw and did, for the demo's checks and summary."""

    events: list[dict[str, Any]] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)
    applied_writes: list[PlannedWrite] = field(default_factory=list)
    untitled: list[dict[str, Any]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


class DemoEditor:
    """One editor window connected to one server process."""

    def __init__(
        self,
        console: Console,
        *,
        env: dict[str, str],
        timeout_s: float,
        decision: ApprovalDecision = "approve",
        on_untitled: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.console = console
        self.timeout_s = timeout_s
        self.decision: ApprovalDecision = decision
        self.record = EditorRecord()
        self.documents: dict[str, OpenDocument] = {}
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._env = env
        self._on_untitled = on_untitled
        self._stderr_task: asyncio.Task[None] | None = None
        self._server_wants_saves = False
        self.client = LanguageClient(
            "relavium-demo", __version__, converter_factory=relavium_converter
        )
        self._register_handlers()

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The server's process id once started."""
        process = client_process(self.client)
        return process.pid if process is not None else None

    async def start(self, workspace: Path) -> tuple[types.InitializeResult, float]:
        """Start ``relavium-lsp serve`` and initialize it on ``workspace``; returns the time."""
        started = time.perf_counter()
        await self.client.start_io(sys.executable, "-m", "relavium_lsp", "serve", env=self._env)
        process = client_process(self.client)
        if process is not None and process.stderr is not None:
            self._stderr_task = asyncio.create_task(self._drain_stderr(process.stderr))
        result = await self.request_typed(
            self.client.initialize_async(
                types.InitializeParams(
                    process_id=os.getpid(),
                    capabilities=_capabilities(),
                    client_info=types.ClientInfo(name="relavium-demo", version=__version__),
                    root_uri=workspace.as_uri(),
                    workspace_folders=[
                        types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)
                    ],
                    initialization_options={"clientName": "relavium-demo"},
                )
            ),
            "initialize",
        )
        self.client.initialized(types.InitializedParams())
        self._server_wants_saves = _wants_did_save(result)
        return result, time.perf_counter() - started

    async def shutdown(self) -> int | None:
        """``shutdown`` then ``exit``; waits for the process and returns its exit code."""
        await self.request_typed(self.client.shutdown_async(None), "shutdown")
        self.client.exit(None)
        return await self.stop()

    async def stop(self) -> int | None:
        """Make sure the process is gone (terminating it if it does not exit in time)."""
        process = client_process(self.client)
        if process is not None and process.returncode is None:
            for end in (None, process.terminate, process.kill):
                if end is not None:
                    end()
                try:
                    await asyncio.wait_for(process.wait(), SHUTDOWN_GRACE_S)
                    break
                except TimeoutError:
                    continue
        # Always: it also collects pygls' reader tasks once the process is gone.
        await self.client.stop()  # type: ignore[no-untyped-call]
        if self._stderr_task is not None:
            await self._stderr_task
        return process.returncode if process is not None else None

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        # An unread pipe could fill up and block the server; keep the tail for error reports.
        while line := await stream.readline():
            text = line.decode("utf-8", errors="replace").rstrip()
            self.stderr_tail.append(text)
            _log.info("server stderr: %s", text)

    # -- requests ----------------------------------------------------------------------------

    async def request_typed(self, pending: Any, method: str) -> Any:
        """Await a pending request with the demo's timeout and clear errors."""
        try:
            return await asyncio.wait_for(pending, self.timeout_s)
        except TimeoutError:
            raise ServerProblem(
                f"the server did not answer {method} within {self.timeout_s:g} s"
            ) from None
        except asyncio.CancelledError:
            raise
        except RuntimeError as error:  # pygls: the server process exited
            raise ServerProblem(f"{method} failed: {error}") from None
        except Exception as error:  # a JSON-RPC error response
            message = getattr(error, "message", None) or str(error) or type(error).__name__
            raise ServerProblem(f"the server answered {method} with an error: {message}") from None

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a custom ``relavium/*`` request; the result is a dict."""
        result = await self.request_typed(
            self.client.protocol.send_request_async(method, params), method
        )
        if not isinstance(result, dict):
            raise ServerProblem(f"{method} returned {type(result).__name__}, not an object")
        return result

    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        self.client.protocol.notify(method, params)

    def open_document(self, path: Path, language_id: str) -> str:
        """``textDocument/didOpen`` with the file's text, as an editor opening a tab."""
        uri = path.as_uri()
        text = path.read_text(encoding="utf-8")
        self.documents[uri] = OpenDocument(version=1, text=text)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id=language_id, version=1, text=text
                )
            )
        )
        return uri

    # -- server → client ---------------------------------------------------------------------

    def _register_handlers(self) -> None:
        handlers: dict[str, Callable[..., Any]] = {
            methods.SESSION_EVENT: self._on_event,
            methods.REQUEST_APPROVAL: self._on_approval,
            methods.OPEN_UNTITLED: self._on_open_untitled,
            types.WORKSPACE_APPLY_EDIT: self._apply_edit,
            types.WINDOW_WORK_DONE_PROGRESS_CREATE: _ignore,
            types.PROGRESS: _ignore,
            types.WINDOW_SHOW_MESSAGE: self._on_show_message,
            types.WINDOW_LOG_MESSAGE: _log_message,
        }
        for method, handler in handlers.items():
            # pygls' decorator is untyped (so it is called, not applied) and tags the function
            # with attributes, which a bound method cannot take: register a plain wrapper.
            register = self.client.feature(method)
            register(_plain_function(handler))

    def _on_event(self, params: dict[str, Any]) -> None:
        self.record.events.append(params)
        self.console.event(params)

    def _on_approval(self, params: dict[str, Any]) -> dict[str, Any]:
        self.record.approvals.append(params)
        preview = params.get("preview") or {}
        target = preview.get("path") or preview.get("command") or preview.get("host")
        self.console.rpc(
            f"{methods.REQUEST_APPROVAL}: {params.get('toolId')} ({params.get('action')}) "
            f"on {target} → the demo answers {self.decision!r}"
        )
        diff = params.get("diff")
        if isinstance(diff, dict) and isinstance(diff.get("unified"), str):
            self.console.block(diff["unified"])  # what the user reviews before approving
        return {"decision": self.decision}

    def _on_open_untitled(self, params: dict[str, Any]) -> dict[str, Any]:
        self.record.untitled.append(params)
        if self._on_untitled is not None:
            self._on_untitled(params)
        return {"opened": True}

    def _on_show_message(self, params: types.ShowMessageParams) -> None:
        self.record.messages.append(params.message)
        self.console.rpc(f"window/showMessage: {params.message}")

    def _current_text(self, path: Path) -> str | None:
        document = self.documents.get(path.as_uri())
        if document is not None:
            return document.text
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def _apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        """Plan the whole edit first, then update the buffers (telling the server) and save."""
        label = f" {params.label!r}" if params.label else ""
        try:
            planned = plan_workspace_edit(params.edit, self._current_text)
        except UnsupportedEdit as error:
            self.console.rpc(f"workspace/applyEdit{label}: refused ({error})")
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason=str(error))
        for write in planned:
            self._update_buffer(write)
            atomic_write_text(write.path, write.text)
            self._saved(write.path)
            self.record.applied_writes.append(write)
            verb = "created" if write.created else "changed"
            self.console.rpc(
                f"workspace/applyEdit{label}: {verb} {write.path.name} in the editor and saved it"
            )
        return types.ApplyWorkspaceEditResult(applied=True)

    def _update_buffer(self, write: PlannedWrite) -> None:
        uri = write.path.as_uri()
        document = self.documents.get(uri)
        if document is None:
            return
        document.version += 1
        document.text = write.text
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=document.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=write.text)],
            )
        )

    def _saved(self, path: Path) -> None:
        uri = path.as_uri()
        # Like an editor, only when the server asked for save notifications.
        if uri in self.documents and self._server_wants_saves:
            self.client.text_document_did_save(
                types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )

    def stderr_summary(self) -> str:
        """The last lines the server wrote to stderr (for failure reports)."""
        return "\n".join(one_line(line, 200) for line in self.stderr_tail)


def _plain_function(handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def call(params: Any) -> Any:
        return handler(params)

    return call


def _ignore(params: Any) -> None:
    """Accept a message the demo has nothing to show for (progress, for instance)."""
    return None


def _log_message(params: types.LogMessageParams) -> None:
    _log.info("server log message: %s", params.message)


def _wants_did_save(result: types.InitializeResult) -> bool:
    sync = result.capabilities.text_document_sync
    if isinstance(sync, types.TextDocumentSyncOptions):
        return bool(sync.save)
    return False


def _capabilities() -> types.ClientCapabilities:
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[types.ResourceOperationKind.Create],
            ),
            workspace_folders=True,
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True)
        ),
        window=types.WindowClientCapabilities(work_done_progress=True),
        experimental={"relavium": {"approvals": True, "openUntitled": True, "editorState": True}},
    )
