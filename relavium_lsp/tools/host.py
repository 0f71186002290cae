"""The editor as the engine sees it.

The engine never touches pygls. Reads, writes and approvals go through an :class:`EditorHost`:
the LSP layer implements it with open buffers, ``workspace/applyEdit`` and approval requests;
:class:`FilesystemHost` implements it with plain files for the CLI and tests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from relavium_lsp.contracts.diff import FileDiff
from relavium_lsp.contracts.events import AgentApprovalRequested, ApprovalAction, ApprovalPreview
from relavium_lsp.contracts.wire import ApprovalDecision
from relavium_lsp.errors import ToolDenied
from relavium_lsp.tools.file_text import delete_file, write_file_text


@dataclass(frozen=True)
class WriteOutcome:
    """Whether the editor applied a write; ``reason`` says why not."""

    applied: bool
    reason: str | None = None


@dataclass(frozen=True)
class FileChange:
    """A proposed file change: the editor's text now (``None``: no file) and after it.

    ``diff`` is its unified diff for the user, computed on exactly these texts.
    """

    path: Path
    old_text: str | None
    new_text: str
    diff: FileDiff


@dataclass(frozen=True)
class ApprovalRequest:
    """A side-effecting action waiting for the user (``change``: the file change it makes)."""

    session_id: str
    call_id: str
    tool_id: str
    action: ApprovalAction
    preview: ApprovalPreview
    change: FileChange | None = None

    def event(self) -> AgentApprovalRequested:
        """The durable ``agent:approval_requested`` event: no contents, a diff stat at most."""
        return AgentApprovalRequested(
            tool_id=self.tool_id,
            call_id=self.call_id,
            action=self.action,
            preview=self.preview,
            diff_stat=self.change.diff.stat if self.change else None,
        )


class EditorHost(Protocol):
    """What the engine needs from an editor."""

    async def read_open_buffer(self, path: Path) -> str | None:
        """The text of the open (possibly unsaved) buffer for ``path``; ``None`` if not open."""
        ...

    def write_refusal(self, *, creating: bool) -> str | None:
        """Why this editor cannot take a write (``creating``: a new file's), else ``None``.

        Asked before the user is, so that nobody approves a write that cannot happen.
        """
        ...

    async def write_file(self, path: Path, text: str, *, label: str) -> WriteOutcome:
        """Create or replace ``path`` with ``text`` as one undoable edit; the user may refuse."""
        ...

    async def delete_file(self, path: Path, *, label: str) -> WriteOutcome:
        """Delete ``path`` as an undoable edit where the editor can (a rewind of a new file)."""
        ...

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask the user; a host that cannot ask must answer ``reject``."""
        ...


Approver = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]


async def reject_all(request: ApprovalRequest) -> ApprovalDecision:
    """An approver for hosts with nobody to ask."""
    return "reject"


class FilesystemHost:
    """An editor host backed by the plain filesystem (CLI, tests, ACP without ``fs/*``)."""

    def __init__(self, approver: Approver = reject_all) -> None:
        self._approver = approver

    async def read_open_buffer(self, path: Path) -> str | None:
        """No editor, so no open buffers."""
        return None

    def write_refusal(self, *, creating: bool) -> str | None:
        """The disk takes every write."""
        return None

    async def write_file(self, path: Path, text: str, *, label: str) -> WriteOutcome:
        """Write atomically, never through a symlink (:func:`write_to_disk`)."""
        return await write_to_disk(path, text)

    async def delete_file(self, path: Path, *, label: str) -> WriteOutcome:
        """Remove the file (a missing one counts as deleted), never through a symlink."""
        return await delete_from_disk(path)

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Delegate to the configured approver."""
        return await self._approver(request)


async def write_to_disk(path: Path, text: str) -> WriteOutcome:
    """:func:`~relavium_lsp.tools.file_text.write_file_text` off the loop, refusals as outcomes.

    Every host that writes the disk itself (the filesystem host, an LSP or ACP client without
    its own writes) goes through here: atomic, the BOM kept, no symlink followed.
    """
    try:
        await asyncio.to_thread(write_file_text, path, text)
    except ToolDenied as refused:
        return WriteOutcome(applied=False, reason=str(refused))
    return WriteOutcome(applied=True)


async def delete_from_disk(path: Path) -> WriteOutcome:
    """:func:`~relavium_lsp.tools.file_text.delete_file` off the loop, refusals as outcomes."""
    try:
        await asyncio.to_thread(delete_file, path)
    except ToolDenied as refused:
        return WriteOutcome(applied=False, reason=str(refused))
    return WriteOutcome(applied=True)
