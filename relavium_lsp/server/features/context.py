"""Where the user is: workspace folders, open documents, the focused editor and selection.

``workingDir`` is the workspace folder holding the active file (else the first folder);
``activeFile`` comes from the latest ``relavium/editorState`` (else the most recently opened
or changed document); ``selection`` from that editor state; ``gitRef`` from the repository
(branch, else short commit). Every field can be overridden by ``startSession``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from relavium_lsp.gitref import detect_git_ref
from relavium_lsp.server.methods import EDITOR_STATE

if TYPE_CHECKING:
    # The contracts (and pydantic) load after ``initialize``; see relavium_lsp.server.app.
    from relavium_lsp.contracts.session import Selection, SessionContext
    from relavium_lsp.contracts.wire import LspRange
    from relavium_lsp.server.core import RelaviumServer

_log = logging.getLogger(__name__)
EXPORT_SUFFIX = ".relavium.yaml"


def setup(server: RelaviumServer) -> None:
    """Track documents and editor focus."""

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def on_open(ls: RelaviumServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.state.focus.last_touched_uri = params.text_document.uri
        await _note_saved_export(ls, params.text_document.uri, params.text_document.text)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=True))
    async def on_save(ls: RelaviumServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        text = params.text
        if text is None:
            document = ls.workspace.text_documents.get(uri)
            text = document.source if document is not None else None
        if text is not None:
            await _note_saved_export(ls, uri, text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(ls: RelaviumServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.state.focus.last_touched_uri = params.text_document.uri

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(ls: RelaviumServer, params: types.DidCloseTextDocumentParams) -> None:
        focus = ls.state.focus
        if focus.last_touched_uri == params.text_document.uri:
            focus.last_touched_uri = None


def setup_editor_state(server: RelaviumServer) -> None:
    """The ``relavium/editorState`` notification: one of the features loaded after start-up."""
    from pydantic import ValidationError

    from relavium_lsp.contracts.base import validate_request
    from relavium_lsp.contracts.wire import EditorStateParams

    @server.feature(EDITOR_STATE)
    def on_editor_state(ls: RelaviumServer, params: Any) -> None:
        try:
            state = validate_request(EditorStateParams, params)
        except ValidationError:
            _log.info("ignoring an invalid %s notification", EDITOR_STATE)  # client's mistake
            return
        ls.state.focus.uri = state.uri
        ls.state.focus.selection = state.selection


async def _note_saved_export(ls: RelaviumServer, uri: str, text: str) -> None:
    """A saved or opened ``*.relavium.yaml`` export records where the session now lives."""
    path = _file_path(uri)
    engine = ls.state.engine
    if path is None or engine is None or not path.name.endswith(EXPORT_SUFFIX):
        return
    try:
        await engine.note_saved_export(str(path), text)
    except Exception:
        _log.warning("could not record %s as a session export", path, exc_info=True)


def workspace_roots(ls: RelaviumServer) -> list[Path]:
    """The open workspace folders, in the client's order."""
    roots: list[Path] = []
    for folder in ls.workspace.folders.values():
        path = to_fs_path(folder.uri)
        if path:
            roots.append(Path(path))
    if not roots and ls.workspace.root_path:
        roots.append(Path(ls.workspace.root_path))
    return roots


async def detect_context(ls: RelaviumServer) -> SessionContext:
    """The context a new session gets before the client's overrides."""
    from relavium_lsp.contracts.session import SessionContext

    focus = ls.state.focus
    active_uri = focus.uri or focus.last_touched_uri
    active = _file_path(active_uri)
    roots = workspace_roots(ls)
    working_dir = _root_for(active, roots) or (active.parent if active else Path.cwd())
    selection = None
    if active is not None and focus.selection is not None and active_uri == focus.uri:
        selection = _selection(_display_path(active, working_dir), focus.selection)
    return SessionContext(
        working_dir=str(working_dir),
        active_file=_display_path(active, working_dir) if active else None,
        selection=selection,
        git_ref=await detect_git_ref(working_dir),
    )


def _file_path(uri: str | None) -> Path | None:
    if not uri or not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None


def _root_for(path: Path | None, roots: list[Path]) -> Path | None:
    if path is not None:
        containing = [root for root in roots if path.is_relative_to(root)]
        if containing:
            return max(containing, key=lambda root: len(root.parts))
    return roots[0] if roots else None


def _display_path(path: Path, working_dir: Path) -> str:
    return str(path.relative_to(working_dir)) if path.is_relative_to(working_dir) else str(path)


def _selection(file: str, lsp_range: LspRange) -> Selection | None:
    from relavium_lsp.contracts.session import Selection

    start, end = lsp_range.start, lsp_range.end
    if (start.line, start.character) == (end.line, end.character):
        return None
    last = end.line if end.character > 0 or end.line == start.line else end.line - 1
    return Selection(file=file, start_line=start.line + 1, end_line=max(last, start.line) + 1)
