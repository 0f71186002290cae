"""The editor, seen by the engine through ACP.

- File reads prefer the client's ``fs/read_text_file`` (its unsaved buffers) when the client
  advertised it; otherwise the tool reads the disk itself through the scope jail.
- File writes go through the client's ``fs/write_text_file`` when advertised, else to disk
  atomically. Either way the path was resolved and checked by the jail before the host is
  called (the registry prepares every call first), so the scope tier always applies.
- Approvals are ``session/request_permission`` with allow once / allow always / reject. A
  ``cancelled`` outcome means the client cancelled the prompt: the turn is cancelled (never
  treated as a rejection the model could argue with).

The client needs a session id for every ``fs/*`` call, so the tool dispatcher hands each call
a :class:`CallScopedHost` that knows its session and call; :class:`AcpEditorHost` is the
process-wide host the engine was opened with.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from acp.schema import FileEditToolCallContent, ToolCallStart, ToolCallUpdate

from relavium_lsp.acp.connection import ClientPeer
from relavium_lsp.acp.outbox import UpdateOutbox
from relavium_lsp.acp.permissions import decision_for, permission_options
from relavium_lsp.acp.tool_calls import CallBook, CallRecord
from relavium_lsp.acp.updates import ToolContent, status_update, text_content
from relavium_lsp.contracts.wire import ApprovalDecision
from relavium_lsp.errors import RelaviumError
from relavium_lsp.tools.file_text import decode_file_text
from relavium_lsp.tools.host import ApprovalRequest, EditorHost, FilesystemHost, WriteOutcome
from relavium_lsp.tools.jail import ScopeRoots, open_in_scope

_log = logging.getLogger(__name__)
MAX_DIFF_CHARS = 512 * 1024
MAX_REASON_CHARS = 300


@dataclass(frozen=True)
class ClientLink:
    """What the host needs from the ACP connection."""

    client: ClientPeer
    can_read: bool
    can_write: bool
    outbox: UpdateOutbox
    book: CallBook
    # Wait until the session's emitted events have reached the outbox (ordering).
    settle_events: Callable[[str], Awaitable[None]]
    # Cancel the session's running prompt; False when none is running.
    cancel_prompt: Callable[[str], bool]


def diff_content(path: Path, old_text: str | None, new_text: str) -> FileEditToolCallContent | None:
    """A ``diff`` tool content, or ``None`` when either side is too large to show."""
    if len(new_text) > MAX_DIFF_CHARS or len(old_text or "") > MAX_DIFF_CHARS:
        return None
    return FileEditToolCallContent(
        type="diff", path=str(path), old_text=old_text, new_text=new_text
    )


def _read_disk_text(path: Path, roots: ScopeRoots) -> str | None:
    """The current text of an in-scope file for a diff; ``None`` if absent or unreadable."""
    try:
        descriptor = open_in_scope(path, roots)
    except (RelaviumError, OSError):
        return None
    with os.fdopen(descriptor, "rb") as handle:
        data = handle.read(MAX_DIFF_CHARS * 4 + 1)
    if len(data) > MAX_DIFF_CHARS * 4:
        return None
    try:
        return decode_file_text(data, path.name)
    except RelaviumError:
        return None


async def current_text(link: ClientLink, record: CallRecord, path: Path) -> str | None:
    """What ``path`` holds now: the client's buffer when it can say, else the disk."""
    if link.can_read:
        try:
            response = await link.client.read_text_file(
                session_id=record.session_id, path=str(path)
            )
        except asyncio.CancelledError:
            raise
        except Exception:
            return None
        return response.content
    if record.roots is None:
        return None
    return await asyncio.to_thread(_read_disk_text, path, record.roots)


async def mark_started(link: ClientLink, record: CallRecord) -> None:
    """Tell the client the call is running (once), after its ``tool_call`` went out."""
    if record.started:
        return
    record.started = True
    await link.settle_events(record.session_id)
    link.outbox.push(record.session_id, status_update(record.call_id, "in_progress"))


async def _permission_content(
    link: ClientLink, request: ApprovalRequest, record: CallRecord | None
) -> list[ToolContent]:
    change = request.change
    if change is not None:
        # The texts the tool computed its change on: the client's buffer, else the disk.
        diff = diff_content(change.path, change.old_text, change.new_text)
        if diff is not None:
            return [diff]
    preview = request.preview
    shown = preview.command or preview.path or preview.host or request.tool_id
    return [text_content(f"{request.action}: {shown}")]


def _announce_unknown_call(link: ClientLink, request: ApprovalRequest) -> None:
    """Show a ``tool_call`` for an approval that belongs to no tool call (the cost cap)."""
    link.outbox.push(
        request.session_id,
        ToolCallStart(
            session_update="tool_call",
            tool_call_id=request.call_id,
            title=f"Continue past the cost cap ({request.preview.host or request.tool_id})",
            kind="other",
            status="pending",
        ),
    )


async def _permission_tool_call(
    link: ClientLink, request: ApprovalRequest, record: CallRecord | None
) -> ToolCallUpdate:
    content = await _permission_content(link, request, record)
    if record is None:
        return ToolCallUpdate(
            tool_call_id=request.call_id, kind="other", status="pending", content=content
        )
    description = record.description
    return ToolCallUpdate(
        tool_call_id=request.call_id,
        title=description.title,
        kind=description.kind,
        status="pending",
        content=content,
        locations=list(description.locations) or None,
    )


async def ask_permission(link: ClientLink, request: ApprovalRequest) -> ApprovalDecision:
    """Put one approval to the user through ``session/request_permission``."""
    session_id = request.session_id
    record = link.book.get(session_id, request.call_id)
    # The client must know the call (its tool_call sent) before it is asked about it.
    await link.settle_events(session_id)
    if record is None:
        _announce_unknown_call(link, request)
    await link.outbox.flush()
    tool_call = await _permission_tool_call(link, request, record)
    options = permission_options(offer_always=record.offer_always if record else True)
    try:
        response = await link.client.request_permission(
            session_id=session_id, tool_call=tool_call, options=options
        )
        decision = decision_for(response)
    except asyncio.CancelledError:
        raise
    except Exception as error:
        _log.warning("permission request %s failed: %s", request.call_id, type(error).__name__)
        decision = "reject"
    if decision is None:
        # The client cancelled the prompt turn: stop the turn (this task is cancelled with
        # it) rather than hand the model a rejection it could argue with.
        if link.cancel_prompt(session_id):
            await asyncio.Event().wait()
        decision = "reject"
    if record is None:
        final = "failed" if decision == "reject" else "completed"
        link.outbox.push(session_id, status_update(request.call_id, final))
    elif decision != "reject":
        await mark_started(link, record)
    return decision


class AcpEditorHost:
    """The process-wide :class:`EditorHost` of an ACP agent.

    Outside a tool call there is no session to read or write for, so reads see no buffer
    and writes are refused; approvals (tool calls and the cost cap) go to the client.
    """

    def __init__(self, link: ClientLink) -> None:
        self._link = link

    async def read_open_buffer(self, path: Path) -> str | None:
        """No buffer is known outside a tool call."""
        return None

    def write_refusal(self, *, creating: bool) -> str | None:
        """Known only inside a tool call (see :class:`CallScopedHost`)."""
        return None

    async def write_file(self, path: Path, text: str, *, label: str) -> WriteOutcome:
        """Refused: every write must come from a jail-checked tool call."""
        return WriteOutcome(applied=False, reason="writes only happen inside a tool call")

    async def delete_file(self, path: Path, *, label: str) -> WriteOutcome:
        """Refused, like :meth:`write_file`."""
        return WriteOutcome(applied=False, reason="deletes only happen inside a tool call")

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask the user through the client."""
        return await ask_permission(self._link, request)


class CallScopedHost:
    """The host one tool call sees: the client's ``fs/*`` for its session, or the disk."""

    def __init__(self, inner: EditorHost, link: ClientLink, record: CallRecord) -> None:
        self._inner = inner
        self._link = link
        self._record = record

    async def read_open_buffer(self, path: Path) -> str | None:
        """The client's view of the file (unsaved edits included); ``None`` → disk."""
        if not self._link.can_read:
            return None
        await mark_started(self._link, self._record)
        try:
            response = await self._link.client.read_text_file(
                session_id=self._record.session_id, path=str(path)
            )
        except asyncio.CancelledError:
            raise
        except Exception as error:
            _log.info("fs/read_text_file failed (%s); reading the disk", type(error).__name__)
            return None
        return response.content

    def write_refusal(self, *, creating: bool) -> str | None:
        """The client's ``fs/write_text_file``, or the disk, takes every write."""
        return None

    async def write_file(self, path: Path, text: str, *, label: str) -> WriteOutcome:
        """Write through the client when it can, else atomically to disk; keep the diff."""
        link, record = self._link, self._record
        await mark_started(link, record)
        old_text = await current_text(link, record, path)
        if link.can_write:
            try:
                await link.client.write_text_file(
                    session_id=record.session_id, path=str(path), content=text
                )
            except asyncio.CancelledError:
                raise
            except Exception as error:
                reason = str(error)[:MAX_REASON_CHARS] or type(error).__name__
                return WriteOutcome(applied=False, reason=f"the editor refused it: {reason}")
        else:
            # The registry resolved and checked this path before calling us.
            outcome = await FilesystemHost().write_file(path, text, label=label)
            if not outcome.applied:
                return outcome
        record.diff = diff_content(path, old_text, text)
        return WriteOutcome(applied=True)

    async def delete_file(self, path: Path, *, label: str) -> WriteOutcome:
        """ACP has no ``fs/`` delete: the disk's."""
        return await FilesystemHost().delete_file(path, label=label)

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """The process-wide host's (the engine asks through its session scope, not here)."""
        return await self._inner.request_approval(request)
