"""Checkpoints for files a ``run_command`` changes (``docs/design.md`` §6.3).

A command says nothing about the files it writes, so the workspace is looked at around it
(only when the turn keeps checkpoints, and only in a git repository): before the command,
the size and mtime of every file git knows (tracked, or untracked and not ignored) and the
text of the files whose content git cannot give back (changed or untracked ones, each up to
:data:`MAX_KEPT_FILE_BYTES`); after it, every file whose size or mtime changed, that appeared
or that disappeared goes to the turn's journal with what it held before — from that snapshot,
or from git's index for a file that was clean. What cannot be captured (too large, binary,
too many files) is listed in the command's result, so the user knows the rewind cannot
restore it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from relavium_lsp.tools.base import ToolCallContext
from relavium_lsp.tools.git import GIT_SAFETY_OPTIONS, git_env
from relavium_lsp.tools.runner import SAFE_PATH, run_process

MAX_TRACKED_FILES = 50_000
MAX_KEPT_FILE_BYTES = 1024 * 1024
MAX_KEPT_TOTAL_BYTES = 32 * 1024 * 1024
_GIT_TIMEOUT_S = 30.0
_GIT_OUTPUT_BYTES = 64 * 1024 * 1024

Signature = tuple[int, int]  # (mtime in ns, size)


@dataclass
class WorkspaceSnapshot:
    """The workspace as it was before a command (paths relative to ``root``)."""

    root: Path
    git: str
    signatures: dict[str, Signature]
    kept: dict[str, str]  # texts of files git cannot give back
    unkept: set[str] = field(default_factory=set)  # such files too large or not text


async def _git_lines(git: str, root: Path, ctx: ToolCallContext, *args: str) -> list[str] | None:
    result = await run_process(
        [git, *GIT_SAFETY_OPTIONS, *args],
        cwd=root,
        env=git_env(ctx.temp_dir),
        timeout_s=_GIT_TIMEOUT_S,
        max_output_bytes=_GIT_OUTPUT_BYTES,
    )
    if result.exit_code != 0 or result.timed_out or result.stdout_omitted:
        return None
    return [item for item in result.stdout.decode("utf-8", "surrogateescape").split("\0") if item]


def _signatures(root: Path, paths: list[str]) -> dict[str, Signature]:
    found: dict[str, Signature] = {}
    for path in paths:
        try:
            info = os.lstat(root / path)
        except OSError:
            continue
        found[path] = (info.st_mtime_ns, info.st_size)
    return found


def _read_text(path: Path, limit: int) -> str | None:
    try:
        if path.is_symlink() or path.stat().st_size > limit:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


async def _listing(git: str, root: Path, ctx: ToolCallContext) -> list[str] | None:
    return await _git_lines(
        git, root, ctx, "ls-files", "-z", "--cached", "--others", "--exclude-standard"
    )


async def snapshot_before(ctx: ToolCallContext, cwd: Path) -> WorkspaceSnapshot | None:
    """What the command could change, or ``None`` (no journal, or not a git repository)."""
    if ctx.journal is None:
        return None
    git = shutil.which("git", path=SAFE_PATH)
    if git is None:
        return None
    top = await _git_lines(git, cwd, ctx, "rev-parse", "--show-toplevel")
    if not top:
        return None
    root = Path(top[0].strip())
    listed = await _listing(git, root, ctx)
    if listed is None or len(listed) > MAX_TRACKED_FILES:
        return None
    dirty = await _git_lines(git, root, ctx, "status", "--porcelain=v1", "-z", "-uall")
    signatures = await asyncio.to_thread(_signatures, root, listed)
    snapshot = WorkspaceSnapshot(root=root, git=git, signatures=signatures, kept={})
    total = 0
    for entry in dirty or []:
        path = entry[3:] if len(entry) > 3 and entry[2] == " " else None
        if path is None or path not in signatures:
            continue  # a rename's source, or a deleted file
        text = await asyncio.to_thread(_read_text, root / path, MAX_KEPT_FILE_BYTES)
        if text is None or total + len(text) > MAX_KEPT_TOTAL_BYTES:
            snapshot.unkept.add(path)
            continue
        snapshot.kept[path] = text
        total += len(text)
    return snapshot


async def record_after(ctx: ToolCallContext, snapshot: WorkspaceSnapshot) -> str:
    """Journal every file the command changed; a note for the result ('' when complete)."""
    journal = ctx.journal
    if journal is None:
        return ""
    root = snapshot.root
    listed = await _listing(snapshot.git, root, ctx)
    if listed is None:
        return "Files this command changed could not be listed, so a rewind cannot undo them."
    now = await asyncio.to_thread(_signatures, root, listed)
    changed = sorted(
        path
        for path in set(now) | set(snapshot.signatures)
        if now.get(path) != snapshot.signatures.get(path)
    )
    missed: list[str] = []
    for path in changed:
        existed = path in snapshot.signatures
        if not existed:
            before: str | None = None
        elif path in snapshot.kept:
            before = snapshot.kept[path]
        elif path in snapshot.unkept:
            missed.append(path)
            continue
        else:
            before = await _index_text(ctx, snapshot, path)
            if before is None:
                missed.append(path)
                continue
        after = await asyncio.to_thread(_read_text, root / path, MAX_KEPT_FILE_BYTES * 64)
        if after is None and path in now:
            missed.append(path)
            continue
        journal.before_change(root / path, before)
        journal.after_change(root / path, after)
    await journal.commit()  # every changed file's checkpoint, in one transaction
    if not missed:
        return ""
    shown = ", ".join(missed[:10]) + (f" and {len(missed) - 10} more" if len(missed) > 10 else "")
    return f"Not checkpointed (too large, binary or unknown before): {shown}."


async def _index_text(ctx: ToolCallContext, snapshot: WorkspaceSnapshot, path: str) -> str | None:
    """A clean tracked file's text before the command: git's index has it."""
    result = await run_process(
        [snapshot.git, *GIT_SAFETY_OPTIONS, "show", f":{path}"],
        cwd=snapshot.root,
        env=git_env(ctx.temp_dir),
        timeout_s=_GIT_TIMEOUT_S,
        max_output_bytes=MAX_KEPT_FILE_BYTES * 64,
    )
    if result.exit_code != 0 or result.timed_out or result.stdout_omitted:
        return None
    if b"\0" in result.stdout[:8192]:
        return None
    try:
        return result.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None
