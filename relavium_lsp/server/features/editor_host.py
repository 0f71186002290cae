"""The editor, seen by the engine through LSP.

- reads see the open buffer (unsaved text) when the file is open in the editor;
- writes become one ``workspace/applyEdit`` each (create the file if missing, otherwise the
  few ranged edits that turn the editor's text into the new one, so cursor, marks and folds
  of untouched lines survive) so the user can undo them; a refused edit (``applied: false`` or an
  error answer) is reported back, never replaced by a silent disk write (disk writes happen
  only for clients that cannot apply edits and only when the user opted in);
- a write over an open buffer that changed after the agent read it is refused (it would undo
  the user's typing); so is a write the client cannot take at all (no ``applyEdit``; a new
  file without the ``create`` resource operation), that one before the user is asked;
- approvals use ``relavium/requestApproval`` when the client declared it, otherwise the
  standard ``window/showMessageRequest`` with three buttons; a file change's diff goes with
  either (in the message text, cut shorter, for plain clients).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pydantic import ValidationError
from pygls.uris import from_fs_path

from relavium_lsp.contracts.editor_tools import EditorQueryParams, EditorQueryResult
from relavium_lsp.contracts.wire import (
    ApprovalDecision,
    RequestApprovalParams,
    RequestApprovalResult,
)
from relavium_lsp.errors import ToolError
from relavium_lsp.server.methods import EDITOR_QUERY, REQUEST_APPROVAL
from relavium_lsp.tools.file_text import read_file_text
from relavium_lsp.tools.host import ApprovalRequest, WriteOutcome, delete_from_disk, write_to_disk
from relavium_lsp.tools.text_edit import RangedEdit, diff_stat_text, minimal_edits

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer

_log = logging.getLogger(__name__)

MAX_REASON_CHARS = 300
# A plain client shows the diff in a message box: keep it to what fits on a screen.
MAX_MESSAGE_DIFF_CHARS = 4_000
APPROVE = "Approve"
REJECT = "Reject"
ALWAYS = "Always allow for this session"
_BUTTON_DECISIONS: dict[str, ApprovalDecision] = {
    APPROVE: "approve",
    REJECT: "reject",
    ALWAYS: "approve_always",
}


class LspEditorHost:
    """An :class:`~relavium_lsp.tools.host.EditorHost` backed by the LSP client."""

    def __init__(self, server: RelaviumServer) -> None:
        self._server = server
        # Digest of each open buffer's text as the agent last read it, until it writes there.
        self._read_digests: dict[str, str] = {}

    async def read_open_buffer(self, path: Path) -> str | None:
        """The open document's current text, or ``None`` when the file is not open."""
        uri = from_fs_path(str(path))
        if uri is None:
            return None
        document = self._server.workspace.text_documents.get(uri)
        if document is None:
            return None
        text: str = document.source
        self._read_digests[uri] = _digest(text)
        return text

    def write_refusal(self, *, creating: bool) -> str | None:
        """Why the client cannot take this write (asked before the approval prompt)."""
        if not self._can_apply_edits():
            if self._server.state.options.allow_disk_writes:
                return None
            return (
                "the editor cannot apply workspace edits (no workspace.applyEdit capability) "
                "and disk writes are not enabled"
            )
        if creating and not self._supports_file_creation():
            return (
                "the editor cannot create files through workspace edits (its LSP client "
                "declares no 'create' resource operation); ask the user to create the file "
                "(it may be empty), then write it again"
            )
        return None

    async def write_file(self, path: Path, text: str, *, label: str) -> WriteOutcome:
        """Apply the write as a workspace edit (or a disk write where explicitly allowed)."""
        if not self._can_apply_edits():
            if self._server.state.options.allow_disk_writes:
                return await write_to_disk(path, text)
            return WriteOutcome(applied=False, reason=self.write_refusal(creating=False))
        changed = self._changed_since_read(path)
        if changed is not None:
            return WriteOutcome(applied=False, reason=changed)
        edit = await self._workspace_edit(path, text)
        if edit is not None and not edit.document_changes:
            return WriteOutcome(applied=True)  # the editor already holds exactly this text
        if edit is None:
            return WriteOutcome(applied=False, reason=self.write_refusal(creating=True) or "")
        return await self._apply(edit, label)

    async def _apply(self, edit: types.WorkspaceEdit, label: str) -> WriteOutcome:
        try:
            result = await self._server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=edit, label=label)
            )
        except asyncio.CancelledError:
            raise
        except Exception as error:
            # An error answer is no less a refusal than `applied: false`.
            detail = str(error).strip()[:MAX_REASON_CHARS] or type(error).__name__
            _log.warning("workspace/applyEdit failed: %s", detail)
            return WriteOutcome(
                applied=False, reason=f"the editor answered with an error: {detail}"
            )
        if result is not None and result.applied:
            return WriteOutcome(applied=True)
        reason = result.failure_reason if result is not None else None
        return WriteOutcome(applied=False, reason=reason or "the editor refused the edit")

    def editor_features(self) -> frozenset[str]:
        """The ``editor_*`` questions the client said it answers (``editorTools``)."""
        return frozenset(self._server.state.client.editor_tools)

    async def editor_query(self, params: EditorQueryParams) -> EditorQueryResult:
        """Ask the client ``relavium/editorQuery``; an invalid answer is a tool error."""
        raw: Any = await self._server.protocol.send_request_async(EDITOR_QUERY, params.to_wire())
        try:
            return EditorQueryResult.model_validate(_plain(raw))
        except ValidationError as error:
            _log.warning("client answered %s with an invalid result", EDITOR_QUERY)
            raise ToolError(
                f"the editor's answer was not understood ({error.error_count()} problems)"
            ) from None

    async def delete_file(self, path: Path, *, label: str) -> WriteOutcome:
        """Delete through a ``DeleteFile`` workspace edit when the client declares it."""
        if not self._can_apply_edits():
            if self._server.state.options.allow_disk_writes:
                return await delete_from_disk(path)
            return WriteOutcome(applied=False, reason=self.write_refusal(creating=False))
        if not self._supports_resource_operation(types.ResourceOperationKind.Delete):
            return WriteOutcome(
                applied=False,
                reason="the editor cannot delete files through workspace edits (its LSP client "
                "declares no 'delete' resource operation)",
            )
        uri = from_fs_path(str(path)) or path.as_uri()
        delete = types.DeleteFile(
            uri=uri, options=types.DeleteFileOptions(ignore_if_not_exists=True)
        )
        return await self._apply(types.WorkspaceEdit(document_changes=[delete]), label)

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask the user; anything but a clear answer counts as a rejection."""
        try:
            if self._server.state.client.approvals:
                return await self._ask_with_custom_request(request)
            return await self._ask_with_message_request(request)
        except asyncio.CancelledError:
            raise
        except Exception:
            _log.warning("approval request %s failed; treating it as rejected", request.call_id)
            return "reject"

    async def _ask_with_custom_request(self, request: ApprovalRequest) -> ApprovalDecision:
        params = RequestApprovalParams(
            session_id=request.session_id,
            call_id=request.call_id,
            tool_id=request.tool_id,
            action=request.action,
            preview=request.preview,
            diff=request.change.diff if request.change else None,
        )
        raw: Any = await self._server.protocol.send_request_async(
            REQUEST_APPROVAL, params.to_wire()
        )
        try:
            return RequestApprovalResult.model_validate(raw).decision
        except ValidationError:
            _log.warning("client answered %s with an invalid result", REQUEST_APPROVAL)
            return "reject"

    async def _ask_with_message_request(self, request: ApprovalRequest) -> ApprovalDecision:
        preview = request.preview
        target = preview.path or preview.command or preview.host or request.tool_id
        message = f"Relavium wants to run {request.tool_id} ({request.action}): {target}"
        if request.change is not None:
            diff = request.change.diff
            shown = diff.unified
            if len(shown) > MAX_MESSAGE_DIFF_CHARS:
                cut = shown.rfind("\n", 0, MAX_MESSAGE_DIFF_CHARS) + 1
                shown = shown[:cut] + "[... diff cut ...]\n"
            message += f" ({diff_stat_text(diff.stat)} lines)\n\n{shown}"
        answer = await self._server.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=message,
                actions=[types.MessageActionItem(title=title) for title in _BUTTON_DECISIONS],
            )
        )
        if answer is None:
            return "reject"
        return _BUTTON_DECISIONS.get(answer.title, "reject")

    async def _workspace_edit(self, path: Path, text: str) -> types.WorkspaceEdit | None:
        """The edit that makes ``path`` hold ``text``.

        ``None`` when the file must be created and the client cannot; no changes when it
        already holds ``text``.
        """
        uri = from_fs_path(str(path)) or path.as_uri()
        document = self._server.workspace.text_documents.get(uri)
        if document is not None:
            old_text: str | None = document.source
            version: int | None = document.version
        else:
            old_text = await asyncio.to_thread(read_file_text, path)
            version = None
        if old_text is not None:
            if old_text == text:
                return types.WorkspaceEdit(document_changes=[])
            ranged = [_text_edit(edit) for edit in minimal_edits(old_text, text)]
        else:
            ranged = [types.TextEdit(range=_full_range(""), new_text=text)]
        text_edit = types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=ranged,
        )
        if old_text is not None:
            return types.WorkspaceEdit(document_changes=[text_edit])
        if not self._supports_file_creation():
            return None
        create = types.CreateFile(
            uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True)
        )
        return types.WorkspaceEdit(document_changes=[create, text_edit])

    def _changed_since_read(self, path: Path) -> str | None:
        """Why the write would overwrite what the user typed after the agent read the buffer.

        The write replaces the whole document with text the agent built from what it read;
        applied over newer text it would silently undo the user's typing.
        """
        uri = from_fs_path(str(path)) or path.as_uri()
        read = self._read_digests.pop(uri, None)
        document = self._server.workspace.text_documents.get(uri)
        if read is None or document is None or _digest(document.source) == read:
            return None
        return (
            f"{path.name} changed in the editor after the agent read it; not applied, so the "
            "user's changes are kept (read the file again before writing it)"
        )

    def _can_apply_edits(self) -> bool:
        capabilities = self._server.client_capabilities.workspace
        return bool(capabilities and capabilities.apply_edit)

    def _supports_file_creation(self) -> bool:
        return self._supports_resource_operation(types.ResourceOperationKind.Create)

    def _supports_resource_operation(self, kind: types.ResourceOperationKind) -> bool:
        workspace = self._server.client_capabilities.workspace
        workspace_edit = workspace.workspace_edit if workspace else None
        if workspace_edit is None or not workspace_edit.document_changes:
            return False
        return kind in (workspace_edit.resource_operations or [])


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _text_edit(edit: RangedEdit) -> types.TextEdit:
    return types.TextEdit(
        range=types.Range(
            start=types.Position(line=edit.start.line, character=edit.start.character),
            end=types.Position(line=edit.end.line, character=edit.end.character),
        ),
        new_text=edit.new_text,
    )


def _full_range(text: str) -> types.Range:
    """The range covering all of ``text`` (LSP positions, UTF-16 code units)."""
    lines = text.split("\n")
    last = lines[-1]
    width = len(last.encode("utf-16-le")) // 2
    return types.Range(
        start=types.Position(line=0, character=0),
        end=types.Position(line=len(lines) - 1, character=width),
    )


def _plain(value: Any) -> Any:
    """A result as plain JSON data (in case the transport handed over attribute objects)."""
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if hasattr(value, "_asdict"):
        return {key: _plain(item) for key, item in value._asdict().items()}
    if hasattr(value, "__dict__") and not isinstance(value, str | int | float | bool):
        return {key: _plain(item) for key, item in vars(value).items()}
    return value
