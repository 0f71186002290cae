"""Code actions, so a plain LSP client reaches the main functions from its own menus.

On a selection: "Ask Relavium" and "Explain" send the selected code (quoted, with its file
and lines) to the chat of these code actions — started on first use, in the selection's
context — without waiting for the turn; progress shows as ``$/progress`` and the answer as a
``window/showMessage``. Anywhere in a document: "Export this chat" exports that chat (else the
newest chat of the workspace) the way ``relavium/exportSession`` does for the client.

Only plain clients get them: the VS Code extension and the Neovim plugin (which declare
``experimental.relavium``) show their own chat, with their own commands.
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
ASK_TITLE = "Ask Relavium"
EXPLAIN_TITLE = "Explain (Relavium)"
EXPORT_TITLE = "Export this chat (Relavium)"


def setup(server: RelaviumServer) -> None:
    """Offer the code actions and register the commands they run."""
    register_command(server, methods.CODE_ACTION_ASK, SelectionCommandParams, ask_selection)
    register_command(server, methods.CODE_ACTION_EXPLAIN, SelectionCommandParams, explain_selection)
    register_command(server, methods.CODE_ACTION_EXPORT, ExportChatParams, export_chat)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION)
    def code_actions(
        ls: RelaviumServer, params: types.CodeActionParams
    ) -> list[types.Command | types.CodeAction] | None:
        if not ls.state.plain_client or params.context.only:
            return None
        return [_offer(ls, command) for command in _commands_for(params)]


def _commands_for(params: types.CodeActionParams) -> list[types.Command]:
    uri = params.text_document.uri
    offered: list[tuple[str, str, dict[str, object]]] = []
    start, end = params.range.start, params.range.end
    if (start.line, start.character) != (end.line, end.character):
        selection: dict[str, object] = {"uri": uri, "range": _range_json(params.range)}
        offered.append((ASK_TITLE, methods.CODE_ACTION_ASK, selection))
        offered.append((EXPLAIN_TITLE, methods.CODE_ACTION_EXPLAIN, selection))
    offered.append((EXPORT_TITLE, methods.CODE_ACTION_EXPORT, {"uri": uri}))
    return [
        types.Command(title=title, command=command, arguments=[argument])
        for title, command, argument in offered
    ]


def _offer(ls: RelaviumServer, command: types.Command) -> types.Command | types.CodeAction:
    """A code action literal where the client takes them, else the bare command."""
    document = ls.client_capabilities.text_document
    code_action = document.code_action if document is not None else None
    if code_action is not None and code_action.code_action_literal_support is not None:
        return types.CodeAction(title=command.title, command=command)
    return command


def _range_json(lsp_range: types.Range) -> dict[str, dict[str, int]]:
    return {
        "start": {"line": lsp_range.start.line, "character": lsp_range.start.character},
        "end": {"line": lsp_range.end.line, "character": lsp_range.end.character},
    }


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
