"""File tools: ``read_file``, ``write_file``, ``list_directory``.

Every path goes through :func:`~relavium_lsp.tools.jail.resolve_in_scope`; disk reads use
:func:`~relavium_lsp.tools.jail.open_in_scope` (``O_NOFOLLOW`` + descriptor re-check) and
directory walks never follow a symlink (each level is opened relative to its parent's
descriptor). Reads prefer the editor's open buffer. Writes go through the editor host — a
refused edit is a failed result and nothing is written to disk behind the editor's back.
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path, PurePath
from typing import Any

from pydantic import Field, model_validator

from relavium_lsp.contracts.diff import FileDiff
from relavium_lsp.contracts.events import ApprovalPreview
from relavium_lsp.errors import ToolDenied, ToolError
from relavium_lsp.secret_shapes import redact_secrets
from relavium_lsp.tools.base import (
    ApprovalNeed,
    PreparedCall,
    ToolArgs,
    ToolCallContext,
    ToolDefinition,
    ToolLimits,
    ToolRun,
)
from relavium_lsp.tools.file_text import decode_file_text
from relavium_lsp.tools.host import FileChange
from relavium_lsp.tools.jail import (
    ScopeRoots,
    check_write_target,
    open_in_scope,
    resolve_in_scope,
)
from relavium_lsp.tools.line_endings import (
    keep_final_newline,
    keep_line_endings,
    normalize_newlines,
)
from relavium_lsp.tools.protected import protected_pattern
from relavium_lsp.tools.text_edit import (
    TRANSCRIPT_DIFF_CHARS,
    cut_diff,
    diff_stat_text,
    file_diff,
)

SKIPPED_DIRECTORIES = frozenset({".git"})
# Files the agent changes are read whole for their diff; the write limit bounds what it sends.
_NO_READ_LIMIT = 64 * 1024 * 1024
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class ReadFileArgs(ToolArgs):
    """Arguments of ``read_file``."""

    path: str = Field(min_length=1, max_length=4096, description="Path relative to the workspace.")
    start_line: int | None = Field(default=None, ge=1, description="First line (1-based).")
    end_line: int | None = Field(default=None, ge=1, description="Last line, inclusive.")

    @model_validator(mode="after")
    def _ordered(self) -> ReadFileArgs:
        if self.start_line and self.end_line and self.end_line < self.start_line:
            raise ValueError("endLine must not be before startLine")
        return self


class WriteFileArgs(ToolArgs):
    """Arguments of ``write_file``."""

    path: str = Field(min_length=1, max_length=4096, description="Path relative to the workspace.")
    content: str = Field(description="The complete new text of the file.")


class ListDirectoryArgs(ToolArgs):
    """Arguments of ``list_directory``."""

    path: str = Field(default=".", min_length=1, max_length=4096)
    depth: int = Field(default=1, ge=1, le=10, description="How many levels to descend.")


def _read_disk(resolved: Path, roots: ScopeRoots, max_bytes: int, label: str) -> str:
    descriptor = open_in_scope(resolved, roots)
    with os.fdopen(descriptor, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise ToolError(
                f"{label!r} is {size:,} bytes, over the {max_bytes:,}-byte read limit; "
                "use search_files to find the part you need"
            )
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ToolError(f"{label!r} grew past the {max_bytes:,}-byte read limit while reading")
    return decode_file_text(data, label)


async def read_current_text(
    ctx: ToolCallContext, resolved: Path, roots: ScopeRoots, max_bytes: int
) -> str | None:
    """The editor's text of a file (its open buffer, else the disk); ``None`` if absent."""
    label = roots.display(resolved)
    text = await ctx.host.read_open_buffer(resolved)
    if text is not None:
        if len(text) > max_bytes:
            raise ToolError(f"{label!r} is over the {max_bytes:,}-byte limit")
        return text
    if not resolved.exists():
        return None
    return await asyncio.to_thread(_read_disk, resolved, roots, max_bytes, label)


def changed_meanwhile(label: str) -> ToolRun:
    """The result of a write whose file changed while the user was looking at its diff."""
    return ToolRun(
        f"{label} changed in the editor after the agent read it; not applied, so the user's "
        "changes are kept (read the file again before changing it). The file was not changed.",
        failed=True,
        error_code="tool_failed",
    )


async def write_through_host(
    ctx: ToolCallContext, resolved: Path, change: FileChange, label: str
) -> ToolRun | None:
    """Apply a prepared change through the editor; a failed result, or ``None`` when applied.

    The path is checked against the scope at this moment (a file or parent replaced by a
    symlink while the prompt was up is refused), and the file is read again: if it no
    longer holds the text the diff was computed on (the user typed meanwhile), nothing is
    written.
    """
    roots = ctx.scope_roots()
    check_write_target(resolved, roots)
    now = await read_current_text(ctx, resolved, roots, _NO_READ_LIMIT)
    if now != change.old_text:
        return changed_meanwhile(label)
    if ctx.journal is not None:
        ctx.journal.before_change(resolved, now)
        await ctx.journal.commit()  # stored before the editor overwrites it
    outcome = await ctx.host.write_file(resolved, change.new_text, label=_edit_label(ctx))
    if outcome.applied:
        if ctx.journal is not None:
            ctx.journal.after_change(resolved, change.new_text)
            ctx.journal.commit_later()  # the turn goes on while it is written
        return None
    why = f": {outcome.reason}" if outcome.reason else ""
    return ToolRun(
        f"The editor refused the edit to {label}{why}. The file was not changed.",
        failed=True,
        error_code="tool_failed",
    )


def _line_range(text: str, args: ReadFileArgs, label: str) -> str:
    if args.start_line is None and args.end_line is None:
        return text
    lines = text.splitlines(keepends=True)
    total = len(lines)
    start = (args.start_line or 1) - 1
    end = min(args.end_line or total, total)
    if start >= total:
        raise ToolError(f"{label!r} has only {total} lines")
    chunk = "".join(lines[start:end])
    if not chunk.endswith("\n"):
        chunk += "\n"
    # The total with every range, so a large file is read in pieces without guessing.
    tail = "; end of file" if end >= total else ""
    return chunk + f"[lines {start + 1}-{end} of {total}{tail}]"


def _walk(descriptor: int, prefix: str, depth: int, budget: list[int], out: list[str]) -> None:
    """List one directory level from its descriptor; never follows symlinks."""
    with os.scandir(descriptor) as iterator:
        entries = sorted(iterator, key=lambda entry: entry.name)
    for entry in entries:
        if budget[0] <= 0:
            return
        budget[0] -= 1
        name = prefix + entry.name
        if entry.is_symlink():
            out.append(f"{name} -> (symlink, not followed)")
        elif entry.is_dir(follow_symlinks=False):
            if entry.name in SKIPPED_DIRECTORIES:
                out.append(f"{name}/ (skipped)")
                continue
            out.append(f"{name}/")
            if depth > 1:
                try:
                    child = os.open(entry.name, _DIRECTORY_FLAGS, dir_fd=descriptor)
                except OSError:
                    out.append(f"{name}/ (unreadable)")
                    continue
                try:
                    _walk(child, name + "/", depth - 1, budget, out)
                finally:
                    os.close(child)
        elif entry.is_file(follow_symlinks=False):
            size = entry.stat(follow_symlinks=False).st_size
            out.append(f"{name} ({size:,} bytes)")
        else:
            out.append(f"{name} (special file)")


def _list(resolved: Path, roots: ScopeRoots, depth: int, max_entries: int) -> str:
    descriptor = open_in_scope(resolved, roots, directory=True)
    try:
        budget = [max_entries]
        out: list[str] = []
        _walk(descriptor, "", depth, budget, out)
    finally:
        os.close(descriptor)
    header = f"{roots.display(resolved)}/"
    if budget[0] <= 0:
        out.append(f"[... listing stopped after {max_entries:,} entries ...]")
    return "\n".join([header, *out]) if out else f"{header}\n(empty directory)"


def transcript_diff(change: FileChange) -> FileDiff:
    """The diff a file tool's result shows in the transcript: cut, and no known secret in it.

    It lands in the durable event log and goes to every client, so a configured API key,
    the database key, or anything else the one secret detector finds (a private key, a
    token, credentials in a URL: :mod:`relavium_lsp.secret_shapes`) is replaced.
    """
    diff = cut_diff(change.diff, TRANSCRIPT_DIFF_CHARS)
    shown = redact_secrets(diff.unified)
    return diff if shown == diff.unified else diff.model_copy(update={"unified": shown})


def file_change_approval(
    asked: str,
    resolved: Path,
    roots: ScopeRoots,
    ctx: ToolCallContext,
    change: FileChange,
    label: str,
) -> ApprovalNeed:
    """What a change to one file asks the user (``write_file`` and ``edit_file`` alike)."""
    protected = ctx.policy.protected_paths
    return ApprovalNeed(
        action="fs_write",
        preview=ApprovalPreview(path=label),
        scope_key=str(resolved.parent),
        inside_workspace=roots.inside_workspace(resolved),
        # The path as asked for and as resolved: a symlink must not hide either.
        protected=protected_pattern(PurePath(asked), protected)
        or protected_pattern(resolved, protected),
        change=change,
    )


def _edit_label(ctx: ToolCallContext) -> str:
    return f"Relavium: {ctx.session_title or ctx.session_id}"


def fs_tools(limits: ToolLimits) -> list[ToolDefinition[Any]]:
    """``read_file``, ``write_file`` and ``list_directory`` with the given limits."""

    async def prepare_read(args: ReadFileArgs, ctx: ToolCallContext) -> PreparedCall:
        roots = ctx.scope_roots()
        resolved = resolve_in_scope(args.path, roots, must_exist=True, for_write=False)
        if resolved.is_dir():
            raise ToolError(f"{args.path!r} is a directory; use list_directory")

        async def run() -> ToolRun:
            label = roots.display(resolved)
            text = await read_current_text(ctx, resolved, roots, limits.read_max_bytes)
            if text is None:
                raise ToolError(f"{label!r} does not exist")
            return ToolRun(_line_range(text, args, label))

        return PreparedCall(run=run)

    async def prepare_write(args: WriteFileArgs, ctx: ToolCallContext) -> PreparedCall:
        roots = ctx.scope_roots()
        resolved = resolve_in_scope(args.path, roots, must_exist=False, for_write=True)
        size = len(args.content.encode("utf-8"))
        if size > limits.write_max_bytes:
            raise ToolError(f"the content is {size:,} bytes, over the write limit")
        label = roots.display(resolved)
        refusal = ctx.host.write_refusal(creating=not resolved.exists())
        if refusal is not None:
            # Before the approval prompt: nobody should approve a write that cannot happen.
            raise ToolError(f"{label} was not written: {refusal}")
        old_text = await read_current_text(ctx, resolved, roots, _NO_READ_LIMIT)
        content = args.content
        if old_text is not None:  # an existing file keeps its line endings (issue 35)
            changed = keep_line_endings(old_text, normalize_newlines(content))
            content = keep_final_newline(old_text, changed)
        change = FileChange(resolved, old_text, content, file_diff(label, old_text, content))

        async def run() -> ToolRun:
            # Re-validate after the approval wait: the path must still resolve the same way.
            again = resolve_in_scope(args.path, ctx.scope_roots(), must_exist=False, for_write=True)
            if again != resolved:
                raise ToolDenied(f"{args.path!r} changed while waiting for approval")
            failed = await write_through_host(ctx, resolved, change, label)
            if failed is not None:
                return failed
            lines = content.count("\n") + (0 if content.endswith("\n") else 1)
            verb = "Replaced" if old_text is not None else "Created"
            stat = diff_stat_text(change.diff.stat)
            return ToolRun(
                f"{verb} {label} ({lines:,} lines, {size:,} bytes; {stat} lines).",
                diff=transcript_diff(change),
            )

        return PreparedCall(
            run=run,
            approval=file_change_approval(args.path, resolved, roots, ctx, change, label),
        )

    async def prepare_list(args: ListDirectoryArgs, ctx: ToolCallContext) -> PreparedCall:
        roots = ctx.scope_roots()
        resolved = resolve_in_scope(args.path, roots, must_exist=True, for_write=False)
        if not stat.S_ISDIR(os.stat(resolved).st_mode):
            raise ToolError(f"{args.path!r} is not a directory; use read_file")
        depth = min(args.depth, limits.list_max_depth)

        async def run() -> ToolRun:
            text = await asyncio.to_thread(_list, resolved, roots, depth, limits.list_max_entries)
            return ToolRun(text)

        return PreparedCall(run=run)

    definitions: list[ToolDefinition[Any]] = [
        ToolDefinition(
            name="read_file",
            description=(
                "Read a UTF-8 text file in scope (the editor's unsaved text when the file is "
                "open). Optionally only lines startLine..endLine (1-based, inclusive); a "
                "ranged read ends with [lines A-B of TOTAL], so read large files in pieces."
            ),
            args_model=ReadFileArgs,
            side_effect="read",
            replay="read-only",
            prepare=prepare_read,
        ),
        ToolDefinition(
            name="write_file",
            description=(
                "Create or replace a text file in scope with the given complete content. "
                "Applied as one undoable editor edit; the user may refuse it."
            ),
            args_model=WriteFileArgs,
            side_effect="fs_write",
            replay="side-effecting",
            prepare=prepare_write,
            summarized_fields=frozenset({"content"}),
        ),
        ToolDefinition(
            name="list_directory",
            description=(
                "List a directory in scope (default: the workspace root), descending `depth` "
                "levels. Symlinks are shown, not followed; .git is skipped."
            ),
            args_model=ListDirectoryArgs,
            side_effect="read",
            replay="read-only",
            prepare=prepare_list,
        ),
    ]
    return definitions
