"""Code actions, so a plain LSP client reaches the main functions from its own menus.

On a selection: "Ask Relavium" and "Explain" send the selected code (quoted, with its file
and lines) to the chat of these code actions — started on first use, in the selection's
context — without waiting for the turn; progress shows as ``$/progress`` and the answer as a
``window/showMessage``. Anywhere in a document: "Export this chat" exports that chat (else the
newest chat of the workspace) the way ``relavium/exportSession`` does for the client.

Only plain clients get them: the VS Code extension and the Neovim plugin (which declare
``experimental.relavium``) show their own chat, with their own commands.

This module only *offers* the actions and is registered at start-up (the ``codeActionProvider``
capability is computed at ``initialize``); it imports nothing heavier than lsprotocol. The
commands the actions run live in :mod:`~relavium_lsp.server.features.selection_chat`, loaded
with the other session features.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from relavium_lsp.server import methods

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer

ASK_TITLE = "Ask Relavium"
EXPLAIN_TITLE = "Explain (Relavium)"
EXPORT_TITLE = "Export this chat (Relavium)"


def setup(server: RelaviumServer) -> None:
    """Offer the code actions (their commands are registered with the session features)."""

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
