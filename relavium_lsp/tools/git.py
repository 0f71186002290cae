"""``git_status`` (read-only) and ``git_commit`` (always asks), in the workspace root.

Git runs from the safe PATH with fixed leading options the model cannot change:
``--no-pager -c core.pager=cat -c core.fsmonitor=false`` (an fsmonitor or pager command
from repository config would run code), ``-c core.hooksPath=/dev/null`` for commits (hooks
would run whatever the agent wrote into a hooks directory tracked in the worktree; agent
commits run no hooks), ``GIT_OPTIONAL_LOCKS=0`` so status never writes the index, and
``--no-ext-diff --no-textconv`` for diffs. The environment is minimal plus
``GIT_CONFIG_NOSYSTEM=1``, ``GIT_TERMINAL_PROMPT=0`` and ``GIT_LITERAL_PATHSPECS=1`` (no
pathspec globs or magic);
``HOME`` is the user's real home so their identity and global config apply — the model can
pass no ``-c``. ``git_commit`` pathspecs are jailed, must not look like options or magic, go
after ``--``; the message goes through stdin (``-F -``), never as an option.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path
from typing import Any

from pydantic import Field

from relavium_lsp.contracts.events import ApprovalPreview
from relavium_lsp.errors import ToolDenied, ToolError
from relavium_lsp.tools.base import (
    ApprovalNeed,
    PreparedCall,
    ToolArgs,
    ToolCallContext,
    ToolDefinition,
    ToolLimits,
    ToolRun,
)
from relavium_lsp.tools.jail import ScopeRoots, resolve_in_scope
from relavium_lsp.tools.runner import SAFE_PATH, ProcessResult, minimal_env, run_process

GIT_SAFETY_OPTIONS = ("--no-pager", "-c", "core.pager=cat", "-c", "core.fsmonitor=false")
GIT_OUTPUT_BYTES = 512 * 1024


class GitStatusArgs(ToolArgs):
    """``git_status`` takes no arguments."""


class GitCommitArgs(ToolArgs):
    """Arguments of ``git_commit``."""

    message: str = Field(min_length=1, max_length=20_000, description="The commit message.")
    paths: list[str] | None = Field(
        default=None,
        max_length=500,
        description="Files to stage and commit (default: what is already staged).",
    )


def _git_executable() -> str:
    found = shutil.which("git", path=SAFE_PATH)
    if found is None:
        raise ToolError("git is not installed on the safe PATH", code="tool_unavailable")
    return found


def git_env(temp_dir: Path) -> dict[str, str]:
    """The environment every git tool process gets."""
    return minimal_env(
        Path.home(),
        temp_dir,
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_OPTIONAL_LOCKS": "0",
        },
    )


async def _git(
    step: str,
    arguments: list[str],
    ctx: ToolCallContext,
    cwd: Path,
    limits: ToolLimits,
    stdin: bytes | None = None,
) -> ProcessResult:
    result = await run_process(
        [_git_executable(), *GIT_SAFETY_OPTIONS, *arguments],
        cwd=cwd,
        env=git_env(ctx.temp_dir),
        timeout_s=limits.git_timeout_s,
        max_output_bytes=GIT_OUTPUT_BYTES,
        stdin=stdin,
    )
    if result.timed_out:
        raise ToolError(f"git {step} did not finish within {limits.git_timeout_s:g} s")
    return result


def _failure(step: str, result: ProcessResult) -> ToolRun:
    detail = (result.text("stderr") or result.text("stdout")).strip()
    return ToolRun(
        f"git {step} failed (exit code {result.exit_code}):\n{detail}",
        failed=True,
        error_code="tool_failed",
    )


def _commit_pathspecs(paths: list[str], roots: ScopeRoots) -> list[str]:
    pathspecs: list[str] = []
    for raw in paths:
        if raw.startswith("-"):
            raise ToolDenied(f"{raw!r} looks like an option, not a path")
        if raw.startswith(":"):
            raise ToolDenied(f"{raw!r} looks like pathspec magic, not a path")
        resolved = resolve_in_scope(raw, roots, must_exist=False, for_write=False)
        if not resolved.is_relative_to(roots.workspace):
            raise ToolDenied(f"{raw!r} is outside the workspace repository")
        if any(part.casefold() == ".git" for part in resolved.parts):
            raise ToolDenied(f"{raw!r} is inside a .git directory")
        pathspecs.append(os.path.relpath(resolved, roots.workspace))
    return pathspecs


def git_tools(limits: ToolLimits) -> list[ToolDefinition[Any]]:
    """``git_status`` and ``git_commit`` with the given limits."""

    async def prepare_status(args: GitStatusArgs, ctx: ToolCallContext) -> PreparedCall:
        roots = ctx.scope_roots()

        async def run() -> ToolRun:
            status = await _git(
                "status",
                ["status", "--porcelain=v2", "--branch"],
                ctx,
                roots.workspace,
                limits,
            )
            if status.exit_code != 0:
                return _failure("status", status)
            diff = await _git(
                "diff",
                ["diff", "--stat", "--no-ext-diff", "--no-textconv"],
                ctx,
                roots.workspace,
                limits,
            )
            text = status.text("stdout").rstrip("\n")
            diff_text = diff.text("stdout").rstrip("\n") if diff.exit_code == 0 else ""
            if diff_text:
                text += "\n--- unstaged changes (git diff --stat) ---\n" + diff_text
            return ToolRun(text or "(clean)")

        return PreparedCall(run=run)

    async def prepare_commit(args: GitCommitArgs, ctx: ToolCallContext) -> PreparedCall:
        if "\0" in args.message:
            raise ToolDenied("the commit message contains a NUL byte")
        roots = ctx.scope_roots()
        pathspecs = _commit_pathspecs(args.paths or [], roots)
        first_line = args.message.strip().splitlines()[0] if args.message.strip() else ""
        # The prompt shows the subject: no escape sequences or bidi tricks in it.
        subject = "".join(ch if ch.isprintable() else "?" for ch in first_line[:120])
        preview_argv = ["git", "commit", "-m", subject]
        if pathspecs:
            preview_argv += ["--", *pathspecs]

        async def run() -> ToolRun:
            no_hooks = ["-c", "core.hooksPath=/dev/null"]
            if pathspecs:
                added = await _git(
                    "add", [*no_hooks, "add", "--", *pathspecs], ctx, roots.workspace, limits
                )
                if added.exit_code != 0:
                    return _failure("add", added)
            commit_arguments = [*no_hooks, "commit", "-F", "-"]
            if pathspecs:
                commit_arguments += ["--", *pathspecs]
            committed = await _git(
                "commit",
                commit_arguments,
                ctx,
                roots.workspace,
                limits,
                stdin=args.message.encode("utf-8"),
            )
            if committed.exit_code != 0:
                return _failure("commit", committed)
            return ToolRun(committed.text("stdout").strip() or "Committed.")

        return PreparedCall(
            run=run,
            approval=ApprovalNeed(
                action="process",
                preview=ApprovalPreview(command=shlex.join(preview_argv), path="."),
                scope_key="git_commit",
            ),
        )

    definitions: list[ToolDefinition[Any]] = [
        ToolDefinition(
            name="git_status",
            description="Show the repository's branch and changed files (read-only).",
            args_model=GitStatusArgs,
            side_effect="read",
            replay="read-only",
            prepare=prepare_status,
        ),
        ToolDefinition(
            name="git_commit",
            description=(
                "Commit changes with a message. With `paths`, stages and commits exactly those "
                "paths; without, commits what is already staged. Always asks the user first."
            ),
            args_model=GitCommitArgs,
            side_effect="process",
            replay="side-effecting",
            prepare=prepare_commit,
            summarized_fields=frozenset({"message"}),
            always_ask=True,
        ),
    ]
    return definitions
