"""The demo script: one session driven over LSP from a fresh sample workspace to an export.

Each step prints what the editor does and what the server answers; a step that does not get
the expected outcome stops the demo with a clear message and a non-zero exit status. The
conversation is the one the bundled offline cassette was recorded from
(:mod:`relavium_lsp.llm.demo_script`), so it needs no key and no network.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relavium_lsp.atomic_write import atomic_write_text
from relavium_lsp.demo.client import DemoEditor, ServerProblem, server_environment
from relavium_lsp.demo.render import Console, one_line
from relavium_lsp.demo.summary import print_summary, print_transcript
from relavium_lsp.demo.workspace import (
    DEMO_BRANCH,
    DemoPaths,
    WorkspaceSetupError,
    create_sample_workspace,
    workspace_diff,
)
from relavium_lsp.llm import demo_script as script
from relavium_lsp.server import methods

_log = logging.getLogger(__name__)
SESSION_TITLE = "Relavium demo: type hints for greet"
SEARCH_QUERY = "type hints"


class DemoFailure(RuntimeError):
    """A step did not produce what it should have; the message says what happened."""


@dataclass(frozen=True)
class DemoOptions:
    """How to run the demo."""

    paths: DemoPaths
    timeout_s: float = 60.0
    log_level: str | None = None


@dataclass
class DemoState:
    """What earlier steps produced for later ones."""

    editor: DemoEditor | None = None
    workspace: Path | None = None
    session_id: str | None = None
    resumed: dict[str, Any] = field(default_factory=dict)
    export_copy: Path | None = None
    found_sessions: int = 0


class DemoRun:
    """Runs the steps in order, keeping each server process cleaned up whatever happens."""

    def __init__(self, options: DemoOptions, console: Console) -> None:
        self.options = options
        self.paths = options.paths
        self.console = console
        self.state = DemoState()
        self.steps: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            ("Create the sample workspace", self._create_workspace),
            ("Start relavium-lsp serve (editor window 1)", self._start_server),
            (f"Open {script.DEMO_SOURCE_PATH} and select lines", self._open_and_select),
            (f"{methods.START_SESSION}: context detected by the server", self._start_session),
            ("Ask about the selection", self._ask_about_selection),
            (
                "Ask for a change: plan, search, read_file, edit_file, diff, approval",
                self._ask_for_change,
            ),
            ("The change on disk: git diff", self._show_diff),
            ("Close editor window 1 (shutdown, exit)", self._stop_server),
            (f"Editor window 2, a new server: {methods.RESUME_SESSION}", self._resume),
            (f"Search the history: {methods.LIST_SESSIONS}", self._search),
            (f"{methods.EXPORT_SESSION}: the workflow opens untitled", self._export),
            ("Close editor window 2", self._stop_server),
        ]

    async def run(self) -> int:
        """Run every step; 0 when all succeeded, 1 after the first failure."""
        total = len(self.steps)
        for number, (title, action) in enumerate(self.steps, start=1):
            self.console.step(number, total, title)
            try:
                await action()
            except (DemoFailure, ServerProblem, WorkspaceSetupError, OSError) as error:
                self._report_failure(number, title, error)
                return 1
            except Exception as error:
                _log.exception("step %d (%s) crashed", number, title)
                self._report_failure(number, title, RuntimeError(f"unexpected {error!r}"))
                return 1
            finally:
                self.console.end_text()
        print_summary(
            self.console,
            self.paths,
            self.state.resumed,
            export_copy=self.state.export_copy,
            found_sessions=self.state.found_sessions,
        )
        return 0

    async def close(self) -> None:
        """Stop a server that a failed step left running."""
        editor = self.state.editor
        self.state.editor = None
        if editor is not None:
            await editor.stop()

    def _report_failure(self, number: int, title: str, error: BaseException) -> None:
        text = str(error)
        if isinstance(error, OSError) and error.strerror:
            text = f"{error.strerror} ({error.filename})" if error.filename else error.strerror
        self.console.write()
        self.console.fail(f"Step {number} ({title}) failed: {text}")
        editor = self.state.editor
        if editor is not None and editor.stderr_tail:
            self.console.write("  The server's last words on stderr:")
            self.console.block(editor.stderr_summary())
        self.console.write(f"  Server log: {self.paths.server_log}")
        self.console.write(f"  Demo log:   {self.paths.demo_log}")

    # -- steps -------------------------------------------------------------------------------

    async def _create_workspace(self) -> None:
        workspace = await asyncio.to_thread(create_sample_workspace, self.paths)
        self.state.workspace = workspace
        self.console.field("workspace", str(workspace))
        self.console.field("git branch", DEMO_BRANCH)
        for relative in script.DEMO_FILES:
            self.console.field("file", relative)
        self.console.field("data", f"{self.paths.data}  (the demo's own RELAVIUM_HOME)")

    def _editor(self) -> DemoEditor:
        return DemoEditor(
            self.console,
            env=server_environment(self.paths.data, self.options.log_level),
            timeout_s=self.options.timeout_s,
            on_untitled=self._show_untitled,
        )

    async def _start_server(self) -> None:
        editor = self._editor()
        self.state.editor = editor
        result, seconds = await editor.start(self._workspace())
        info = result.server_info
        name = f"{info.name} {info.version}" if info is not None else "a server"
        self.console.ok(f"initialized {name} (pid {editor.pid}) in {seconds:.2f} s")

    async def _open_and_select(self) -> None:
        editor = self._current_editor()
        selection = script.DEMO_SELECTION
        source = self._workspace() / selection.path
        uri = editor.open_document(source, "python")
        self.console.rpc(f"textDocument/didOpen {selection.path}")
        lines = source.read_text(encoding="utf-8").split("\n")
        end_line = selection.end_line - 1
        editor.notify(
            methods.EDITOR_STATE,
            {
                "uri": uri,
                "selection": {
                    "start": {"line": selection.start_line - 1, "character": 0},
                    "end": {"line": end_line, "character": len(lines[end_line])},
                },
            },
        )
        dash = self.console.style.dash
        self.console.rpc(
            f"{methods.EDITOR_STATE}: lines {selection.start_line}{dash}{selection.end_line} "
            "selected"
        )
        for line in lines[selection.start_line - 1 : selection.end_line]:
            self.console.write("    " + self.console.style.paint(line, "dim"))

    async def _start_session(self) -> None:
        started = await self._current_editor().request(
            methods.START_SESSION, {"title": SESSION_TITLE, "source": "demo"}
        )
        self.state.session_id = str(started["sessionId"])
        self.console.focus_session = self.state.session_id
        context = started.get("context") or {}
        selection = context.get("selection") or {}
        dash = self.console.style.dash
        shown = (
            f"{selection.get('file')}:{selection.get('startLine')}{dash}{selection.get('endLine')}"
            if selection
            else "(none)"
        )
        self.console.field("session", self.state.session_id)
        self.console.field("workingDir", str(context.get("workingDir")))
        self.console.field("activeFile", str(context.get("activeFile")))
        self.console.field("selection", shown)
        self.console.field("gitRef", str(context.get("gitRef")))
        self.console.field("agent", f"{started.get('agentRef')} · model {started.get('model')}")
        expected = {
            "workingDir": str(self._workspace()),
            "activeFile": script.DEMO_SOURCE_PATH,
            "gitRef": DEMO_BRANCH,
        }
        for key, value in expected.items():
            if context.get(key) != value:
                raise DemoFailure(f"the server detected {key} {context.get(key)!r}, not {value!r}")
        wanted = (script.DEMO_SELECTION.start_line, script.DEMO_SELECTION.end_line)
        if (selection.get("startLine"), selection.get("endLine")) != wanted:
            raise DemoFailure(f"the server detected the selection {shown}, not lines {wanted}")

    async def _send(self, text: str) -> dict[str, Any]:
        self.console.prompt("you", text)
        result = await self._current_editor().request(
            methods.SEND_MESSAGE, {"sessionId": self._session_id(), "text": text}
        )
        self.console.end_text()
        error = result.get("error")
        if result.get("stopReason") != "stop" or error:
            reason = f"{error.get('code')}: {error.get('message')}" if error else "no error given"
            raise DemoFailure(f"the turn ended with {result.get('stopReason')!r} ({reason})")
        return result

    async def _ask_about_selection(self) -> None:
        result = await self._send(script.ASK_ABOUT_SELECTION)
        self.console.ok(f"answer complete ({len(str(result.get('text', '')))} characters)")

    async def _ask_for_change(self) -> None:
        editor = self._current_editor()
        await self._send(script.ASK_FOR_CHANGE)
        if not editor.record.approvals:
            raise DemoFailure("the write was never put to the user for approval")
        if not editor.record.applied_writes:
            raise DemoFailure("no workspace/applyEdit arrived for the write")
        types = [event.get("type") for event in editor.record.events]
        if "agent:plan_updated" not in types:
            raise DemoFailure("the agent never showed its plan (update_plan)")
        searched = [
            event
            for event in editor.record.events
            if event.get("type") == "agent:tool_result" and event.get("toolId") == "search_files"
        ]
        if not searched or not searched[0].get("success"):
            raise DemoFailure("the agent's search_files call did not succeed")
        target = self._workspace() / script.DEMO_SOURCE_PATH
        on_disk = await asyncio.to_thread(target.read_text, encoding="utf-8")
        if on_disk != script.DEMO_SOURCE_AFTER:
            raise DemoFailure(f"{script.DEMO_SOURCE_PATH} on disk is not the edited version")
        self.console.ok(f"{script.DEMO_SOURCE_PATH} was edited through the editor and saved")

    async def _show_diff(self) -> None:
        diff = await asyncio.to_thread(
            workspace_diff, self._workspace(), color=self.console.style.color
        )
        if not diff.strip():
            raise DemoFailure("git diff is empty: the edit did not reach the file")
        self.console.block(diff)

    async def _stop_server(self) -> None:
        editor = self._current_editor()
        code = await editor.shutdown()
        self.state.editor = None
        if code != 0:
            raise DemoFailure(f"the server (pid {editor.pid}) exited with status {code}")
        self.console.ok(f"server pid {editor.pid} exited cleanly")

    async def _resume(self) -> None:
        await self._start_server()
        resumed = await self._current_editor().request(
            methods.RESUME_SESSION, {"sessionId": self._session_id()}
        )
        self.state.resumed = resumed
        messages = resumed.get("messages") or []
        print_transcript(self.console, messages)
        if not any(message.get("role") == "tool" for message in messages):
            raise DemoFailure("the resumed transcript has no tool messages")
        self.console.ok(
            f"resumed {len(messages)} messages; events up to #{resumed.get('lastEventSequence')}"
        )

    async def _search(self) -> None:
        self.console.prompt("search", repr(SEARCH_QUERY))
        listed = await self._current_editor().request(
            methods.LIST_SESSIONS, {"query": SEARCH_QUERY, "limit": 10}
        )
        sessions = listed.get("sessions") or []
        for summary in sessions:
            this = " (this run)" if summary.get("id") == self.state.session_id else ""
            updated = str(summary.get("updatedAt", ""))[:19].replace("T", " ")
            self.console.field(
                str(summary.get("id", ""))[:8],
                f"{updated}  {summary.get('messageCount')} messages  "
                f"{one_line(str(summary.get('title') or summary.get('preview') or ''), 48)}{this}",
            )
        if not any(summary.get("id") == self.state.session_id for summary in sessions):
            raise DemoFailure(f"searching for {SEARCH_QUERY!r} did not find this session")
        self.state.found_sessions = len(sessions)
        earlier = len(sessions) - 1
        more = f", and {earlier} from earlier demo runs" if earlier else ""
        self.console.ok(f"found this session{more}")

    async def _export(self) -> None:
        editor = self._current_editor()
        result = await editor.request(
            methods.EXPORT_SESSION, {"sessionId": self._session_id(), "format": "workflow"}
        )
        if not editor.record.untitled:
            raise DemoFailure(f"the server never sent {methods.OPEN_UNTITLED}")
        if editor.record.untitled[-1].get("content") != result.get("content"):
            raise DemoFailure("the untitled document differs from the export result")
        self.console.ok(f"suggested path when saved: {result.get('suggestedPath')}")

    def _show_untitled(self, params: dict[str, Any]) -> None:
        content = str(params.get("content", ""))
        title = str(params.get("title") or "untitled.relavium.yaml")
        self.console.rpc(
            f"{methods.OPEN_UNTITLED}: a new untitled {params.get('language')} tab {title!r}:"
        )
        self.console.block(content)
        # The demo's stand-in for the editor tab: a copy you can open (saving is your act).
        target = self.paths.exports / Path(title).name
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, content)
        self.state.export_copy = target

    # -- helpers -----------------------------------------------------------------------------

    def _current_editor(self) -> DemoEditor:
        if self.state.editor is None:
            raise DemoFailure("no server is running")
        return self.state.editor

    def _workspace(self) -> Path:
        if self.state.workspace is None:
            raise DemoFailure("the sample workspace was not created")
        return self.state.workspace

    def _session_id(self) -> str:
        if self.state.session_id is None:
            raise DemoFailure("no session was started")
        return self.state.session_id


async def run_demo(options: DemoOptions, console: Console) -> int:
    """Run the whole demo; returns the process exit status."""
    demo = DemoRun(options, console)
    try:
        return await demo.run()
    finally:
        await demo.close()
