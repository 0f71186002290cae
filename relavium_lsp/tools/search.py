"""``search_files`` (code search) and ``find_files`` (files by name), on ripgrep.

Both are read-only: no approval in any mode, still jailed. The start path is resolved by the
jail and opened here (``O_NOFOLLOW`` + descriptor re-check); the search then runs below that
descriptor without following symlinks, skipping ``.git``, what ``.gitignore`` / ``.ignore``
exclude (unless ``includeIgnored``) and whatever the scope forbids below the root
(:func:`~relavium_lsp.tools.search_query.scope_exclusions`). The engine is ripgrep
(:mod:`relavium_lsp.tools.rg`), or the pure-Python worker
(:mod:`relavium_lsp.tools.search_worker`) when no ``rg`` binary is found; both run as killable
child processes under a timeout, and their output is capped by results and bytes.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from relavium_lsp.errors import ToolError
from relavium_lsp.tools import rg as ripgrep
from relavium_lsp.tools.base import (
    PreparedCall,
    ToolArgs,
    ToolCallContext,
    ToolDefinition,
    ToolLimits,
    ToolRun,
)
from relavium_lsp.tools.jail import ScopeRoots, descriptor_path, open_in_scope, resolve_in_scope
from relavium_lsp.tools.runner import minimal_env
from relavium_lsp.tools.search_query import (
    CaseMode,
    OutputMode,
    SearchOutcome,
    SearchQuery,
    display_prefix,
    format_files,
    format_outcome,
    scope_exclusions,
)

WORKER = Path(__file__).with_name("search_worker.py")
MAX_GLOBS = 20


def _globs(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


class SearchFilesArgs(ToolArgs):
    """Arguments of ``search_files``."""

    pattern: str = Field(min_length=1, max_length=1_000, description="Text or regex to find.")
    path: str = Field(
        default=".", min_length=1, max_length=4096, description="Directory or file to search."
    )
    glob: str | list[str] | None = Field(
        default=None,
        description=(
            "Only files matching these globs, relative to path ('*.py', 'src/**/*.ts'); "
            "a leading '!' excludes ('!*.min.js')."
        ),
    )
    is_regex: bool = Field(
        default=False, description="Treat pattern as a regular expression (Rust regex syntax)."
    )
    case: CaseMode = Field(
        default="sensitive",
        description="'sensitive', 'insensitive', or 'smart' (insensitive if all lowercase).",
    )
    context_lines: int = Field(
        default=0, ge=0, le=10, description="Lines of context before and after each match."
    )
    output: OutputMode = Field(
        default="content",
        description="'content' (matching lines), 'files' (paths only) or 'count' (per file).",
    )
    max_results: int | None = Field(
        default=None, ge=1, description="At most this many matches (files for files/count)."
    )
    include_ignored: bool = Field(
        default=False, description="Also search files .gitignore/.ignore exclude."
    )

    @field_validator("glob")
    @classmethod
    def _bounded_globs(cls, value: str | list[str] | None) -> str | list[str] | None:
        for glob in _globs(value):
            if not glob or len(glob) > 500 or "\0" in glob:
                raise ValueError("each glob must be 1-500 characters without NUL")
        if len(_globs(value)) > MAX_GLOBS:
            raise ValueError(f"at most {MAX_GLOBS} globs")
        return value


class FindFilesArgs(ToolArgs):
    """Arguments of ``find_files``."""

    pattern: str = Field(
        min_length=1,
        max_length=500,
        description=(
            "Glob for file names or paths relative to path: '*.py' (any depth), "
            "'src/**/test_*.py', '**/README*'."
        ),
    )
    path: str = Field(default=".", min_length=1, max_length=4096, description="Where to look.")
    max_results: int | None = Field(default=None, ge=1, description="At most this many paths.")
    include_ignored: bool = Field(
        default=False, description="Also list files .gitignore/.ignore exclude."
    )

    @field_validator("pattern")
    @classmethod
    def _positive(cls, value: str) -> str:
        if value.startswith("!") or "\0" in value:
            raise ValueError("the pattern selects files; it cannot start with '!' or hold NUL")
        return value


@dataclass(frozen=True)
class _Root:
    """A jailed, opened search root: how to run an engine below it and name what it finds."""

    descriptor: int
    is_dir: bool
    label: str

    def cwd(self, resolved: Path, temp_dir: Path) -> str:
        if not self.is_dir:
            return str(temp_dir)
        # The verified descriptor itself (Linux), so a swapped-in symlink cannot redirect us.
        if descriptor_path(self.descriptor) is not None:
            return f"/proc/self/fd/{self.descriptor}"
        return str(resolved)

    def rename(self) -> Callable[[str], str]:
        if not self.is_dir:
            label = self.label
            return lambda _: label
        prefix = display_prefix(self.label)
        return lambda relative: prefix + relative

    def rg_target(self, resolved: Path) -> str:
        if self.is_dir:
            return "./"
        if descriptor_path(self.descriptor) is not None:
            return f"/proc/self/fd/{self.descriptor}"
        return str(resolved)


def _worker_argv(query: SearchQuery, *, mode: str, target: str) -> list[str]:
    request: dict[str, Any] = {
        "mode": mode,
        "target": target,
        "pattern": query.pattern,
        "isRegex": query.is_regex,
        "ignoreCase": query.ignore_case(),
        "globs": list(query.globs),
        "excluded": list(query.excluded),
        "context": query.context,
        "output": query.output,
        "includeIgnored": query.include_ignored,
        "maxFileBytes": query.max_file_bytes,
    }
    return [sys.executable, "-I", "-S", str(WORKER), json.dumps(request)]


async def run_search(
    query: SearchQuery,
    *,
    mode: str,
    resolved: Path,
    roots: ScopeRoots,
    ctx: ToolCallContext,
    timeout_s: float,
) -> SearchOutcome:
    """Open the jailed root and run the engine below it (``mode``: ``grep`` or ``files``)."""
    is_dir = resolved.is_dir()
    descriptor = open_in_scope(resolved, roots, directory=is_dir)
    root = _Root(descriptor, is_dir, roots.display(resolved))
    try:
        rg = ripgrep.find_rg()
        listing = query.output if mode == "grep" else "files"
        if rg is not None:
            argv = (
                ripgrep.grep_argv(rg, query, root.rg_target(resolved))
                if mode == "grep"
                else ripgrep.files_argv(rg, query)
            )
        else:
            target = "./" if is_dir else f"fd:{descriptor}:{root.label}"
            argv = _worker_argv(query, mode=mode, target=target)
        return await ripgrep.collect(
            argv,
            query,
            listing=listing,
            cwd=root.cwd(resolved, ctx.temp_dir),
            rename=root.rename(),
            env=minimal_env(ctx.temp_dir, ctx.temp_dir),
            timeout_s=timeout_s,
            pass_fds=(descriptor,),
        )
    finally:
        os.close(descriptor)


def _cap(requested: int | None, limit: int) -> int:
    return limit if requested is None else min(requested, limit)


def search_tools(limits: ToolLimits) -> list[ToolDefinition[Any]]:
    """``search_files`` and ``find_files`` with the given limits."""

    async def prepare_search(args: SearchFilesArgs, ctx: ToolCallContext) -> PreparedCall:
        roots = ctx.scope_roots()
        resolved = resolve_in_scope(args.path, roots, must_exist=True, for_write=False)
        if not resolved.is_dir() and args.glob:
            raise ToolError("glob applies to directory searches; path is a file")
        query = SearchQuery(
            pattern=args.pattern,
            is_regex=args.is_regex,
            case=args.case,
            globs=_globs(args.glob),
            context=args.context_lines if args.output == "content" else 0,
            output=args.output,
            include_ignored=args.include_ignored,
            max_results=_cap(args.max_results, limits.search_max_matches),
            max_bytes=limits.search_max_output_bytes,
            max_file_bytes=limits.search_max_file_bytes,
            excluded=scope_exclusions(resolved, roots) if resolved.is_dir() else (),
        )

        async def run() -> ToolRun:
            outcome = await run_search(
                query,
                mode="grep",
                resolved=resolved,
                roots=roots,
                ctx=ctx,
                timeout_s=limits.search_timeout_s,
            )
            return ToolRun(format_outcome(outcome, query, roots.display(resolved)))

        return PreparedCall(run=run)

    async def prepare_find(args: FindFilesArgs, ctx: ToolCallContext) -> PreparedCall:
        roots = ctx.scope_roots()
        resolved = resolve_in_scope(args.path, roots, must_exist=True, for_write=False)
        if not resolved.is_dir():
            raise ToolError(f"{args.path!r} is not a directory")
        query = SearchQuery(
            pattern=args.pattern,
            globs=(args.pattern,),
            output="files",
            include_ignored=args.include_ignored,
            max_results=_cap(args.max_results, limits.find_max_results),
            max_bytes=limits.search_max_output_bytes,
            excluded=scope_exclusions(resolved, roots),
        )

        async def run() -> ToolRun:
            outcome = await run_search(
                query,
                mode="files",
                resolved=resolved,
                roots=roots,
                ctx=ctx,
                timeout_s=limits.search_timeout_s,
            )
            return ToolRun(format_files(outcome, query, roots.display(resolved)))

        return PreparedCall(run=run)

    return [
        ToolDefinition(
            name="search_files",
            description=(
                "Search file contents in scope (ripgrep): a literal string, or a regex with "
                "isRegex. Returns path:line: text per match (context lines as path-line- text). "
                "Respects .gitignore/.ignore, skips .git, binaries and symlinks. Narrow with "
                "path and glob; output 'files' lists only paths."
            ),
            args_model=SearchFilesArgs,
            side_effect="read",
            replay="read-only",
            prepare=prepare_search,
        ),
        ToolDefinition(
            name="find_files",
            description=(
                "Find files by name or path glob in scope (e.g. '*.py', 'src/**/test_*.ts'). "
                "Respects .gitignore/.ignore; returns workspace-relative paths, sorted."
            ),
            args_model=FindFilesArgs,
            side_effect="read",
            replay="read-only",
            prepare=prepare_find,
        ),
    ]
