"""The commands behind the code actions: ask about or explain a selection, export the chat.

Offered by :mod:`~relavium_lsp.server.features.code_actions`; registered here with the
other session features (after ``initialize``), through
:func:`~relavium_lsp.server.features.commands.register_command`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from relavium_lsp.contracts.wire import (
    ExportChatParams,
    ExportSessionParams,
    LspPosition,
    LspRange,
    SelectionCommandParams,
    SelectionTurnResult,
    StartSessionParams,
)
from relavium_lsp.errors import InvalidInput
from relavium_lsp.server import methods
from relavium_lsp.server.features.commands import register_command
from relavium_lsp.server.features.context import detect_context
from relavium_lsp.server.features.export import export_session
from relavium_lsp.server.features.lifecycle import get_engine
from relavium_lsp.server.features.sessions import open_session
from relavium_lsp.server.features.turns import TurnRequest, start_turn
from relavium_lsp.server.handlers import Result

if TYPE_CHECKING:
    from relavium_lsp.engine.api import SessionSnapshot
    from relavium_lsp.server.core import RelaviumServer

MAX_SELECTION_CHARS = 50_000


def setup(server: RelaviumServer) -> None:
    """Register the commands the code actions run."""
    register_command(server, methods.CODE_ACTION_ASK, SelectionCommandParams, ask_selection)
    register_command(server, methods.CODE_ACTION_EXPLAIN, SelectionCommandParams, explain_selection)
    register_command(server, methods.CODE_ACTION_EXPORT, ExportChatParams, export_chat)


async def ask_selection(ls: RelaviumServer, params: SelectionCommandParams) -> Result:
    """Send the selection (and the question, when the client asked one) to the chat."""
    quote = _quote(ls, params)
    question = params.question or "Help me with this code"
    return await _send_about_selection(ls, params, f"{question} — {quote}")


async def explain_selection(ls: RelaviumServer, params: SelectionCommandParams) -> Result:
    """Ask the chat to explain the selection."""
    quote = _quote(ls, params)
    return await _send_about_selection(ls, params, f"Explain what this code does — {quote}")


async def export_chat(ls: RelaviumServer, params: ExportChatParams) -> Result:
    """Export the code actions' chat, else the newest chat of the document's workspace."""
    if params.uri is not None:
        _focus(ls, params.uri, None)
    session_id = ls.state.code_action_session
    if session_id is None:
        working_dir = (await detect_context(ls)).working_dir
        page = await (await get_engine(ls)).list_sessions(workspace=working_dir, limit=1)
        if not page.sessions:
            raise InvalidInput(f"there is no Relavium chat in {working_dir} to export yet")
        session_id = page.sessions[0].id
    export = ExportSessionParams(session_id=session_id, format=params.format)
    return await export_session(ls, export)


async def _send_about_selection(
    ls: RelaviumServer, params: SelectionCommandParams, text: str
) -> Result:
    _focus(ls, params.uri, params.range)
    session = await _chat(ls)
    request = TurnRequest(session_id=session.id, text=text, announce=True)
    return SelectionTurnResult(session_id=session.id, turn=await start_turn(ls, request))


async def _chat(ls: RelaviumServer) -> SessionSnapshot:
    """The chat of the code actions: the one used last, or a new one in the current context."""
    session_id = ls.state.code_action_session
    if session_id is not None:
        session = await (await get_engine(ls)).session(session_id)
        if session.record.status != "ended":
            return session
    session = await open_session(ls, StartSessionParams())
    ls.state.code_action_session = session.id
    return session


def _focus(ls: RelaviumServer, uri: str, lsp_range: LspRange | None) -> None:
    """A code action says where the user is: the same as a ``relavium/editorState``."""
    ls.state.focus.uri = uri
    ls.state.focus.selection = lsp_range


def _quote(ls: RelaviumServer, params: SelectionCommandParams) -> str:
    """The selected text as a fenced block, introduced by its file and lines."""
    # Only an open document: the command must not become a way to read any file the server
    # can (code actions are offered on open documents only anyway).
    document = ls.workspace.text_documents.get(params.uri)
    if document is None:
        raise InvalidInput(f"{params.uri[:200]} is not open in the editor")
    start = document.offset_at_position(_position(params.range.start))
    end = document.offset_at_position(_position(params.range.end))
    text = document.source[start:end]
    if not text.strip():
        raise InvalidInput("the selection is empty")
    if len(text) > MAX_SELECTION_CHARS:
        raise InvalidInput(f"the selection is over {MAX_SELECTION_CHARS:,} characters")
    path = to_fs_path(params.uri) or params.uri
    first, last = params.range.start.line + 1, params.range.end.line + 1
    if params.range.end.character == 0 and last > first:
        last -= 1
    lines = f"line {first}" if first == last else f"lines {first}-{last}"
    fence = "````" if "```" in text else "```"
    language = Path(path).suffix.lstrip(".")
    return f"{Path(path).name}, {lines}:\n\n{fence}{language}\n{text.rstrip()}\n{fence}"


def _position(position: LspPosition) -> types.Position:
    return types.Position(line=position.line, character=position.character)
