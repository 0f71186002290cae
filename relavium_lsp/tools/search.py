"""``search_files``: text or regex search inside the scope, in a killable worker process.

The start path is jailed and opened here (``O_NOFOLLOW`` + descriptor re-check); the
descriptor is handed to :mod:`relavium_lsp.tools.search_worker`, which walks below it
without following symlinks. The worker runs with ``python -I -S`` (no site, no user paths, no
working-directory imports), a minimal environment and a timeout that kills its process
group, so a catastrophic regular expression costs at most ``search_timeout_s``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import Field

from relavium_lsp.errors import ToolError
from relavium_lsp.tools.base import ToolCallContext
from relavium_lsp.tools.definition import (
    PreparedCall,
    ToolArgs,
    ToolDefinition,
    ToolLimits,
    ToolRun,
)
from relavium_lsp.tools.jail import ScopeRoots, open_in_scope, resolve_in_scope
from relavium_lsp.tools.runner import minimal_env, run_process

WORKER = Path(__file__).with_name("search_worker.py")
MAX_LINE_CHARS = 4_000
SHOWN_CHARS = 300


class SearchFilesArgs(ToolArgs):
    """Arguments of ``search_files``."""

    pattern: str = Field(min_length=1, max_length=1_000, description="Text or regex to find.")
    path: str = Field(default=".", min_length=1, max_length=4096, description="Where to search.")
    glob: str | None = Field(
        default=None,
        max_length=500,
        description="Only files matching this glob (basename, or relative path if it has '/').",
    )
    is_regex: bool = Field(default=False, description="Treat pattern as a Python regex.")


def _format(reply: dict[str, Any], label: str) -> str:
    matches = reply.get("matches", [])
    lines = [f"{path}:{number}: {text}{' …' if cut else ''}" for path, number, text, cut in matches]
    summary = (
        f"[{len(matches):,} matches in {label}; {reply.get('filesScanned', 0):,} files scanned"
    )
    if reply.get("skippedBinary"):
        summary += f", {reply['skippedBinary']:,} binary skipped"
    if reply.get("skippedLarge"):
        summary += f", {reply['skippedLarge']:,} too large skipped"
    if reply.get("stopped"):
        summary += "; stopped at the result limit, narrow path or glob"
    summary += "]"
    return "\n".join([*lines, summary]) if lines else f"No matches.\n{summary}"


def search_tools(limits: ToolLimits) -> list[ToolDefinition[SearchFilesArgs]]:
    """The ``search_files`` tool with the given limits."""

    async def prepare(args: SearchFilesArgs, ctx: ToolCallContext) -> PreparedCall:
        if args.is_regex:
            try:
                re.compile(args.pattern)
            except re.error as error:
                raise ToolError(f"invalid regular expression: {error}", code="validation") from None
        roots = ScopeRoots.for_call(ctx)
        resolved = resolve_in_scope(args.path, roots, must_exist=True, for_write=False)
        label = roots.display(resolved)

        async def run() -> ToolRun:
            descriptor = open_in_scope(resolved, roots, directory=resolved.is_dir())
            request = {
                "pattern": args.pattern,
                "isRegex": args.is_regex,
                "glob": args.glob,
                "label": label,
                "maxMatches": limits.search_max_matches,
                "maxFiles": limits.search_max_files,
                "maxFileBytes": limits.search_max_file_bytes,
                "maxLineChars": MAX_LINE_CHARS,
                "shownChars": SHOWN_CHARS,
            }
            try:
                result = await run_process(
                    [sys.executable, "-I", "-S", str(WORKER), str(descriptor)],
                    cwd=ctx.temp_dir,
                    env=minimal_env(ctx.temp_dir, ctx.temp_dir),
                    timeout_s=limits.search_timeout_s,
                    max_output_bytes=8 * 1024 * 1024,
                    stdin=json.dumps(request).encode("utf-8"),
                    pass_fds=(descriptor,),
                )
            finally:
                os.close(descriptor)
            if result.timed_out:
                raise ToolError(
                    f"the search did not finish within {limits.search_timeout_s:g} s; "
                    "use a simpler pattern or a narrower path/glob"
                )
            try:
                reply = json.loads(result.stdout)
            except ValueError:
                raise ToolError("the search worker failed") from None
            if "error" in reply:
                raise ToolError(str(reply["error"]), code="validation")
            return ToolRun(_format(reply, label))

        return PreparedCall(run=run)

    return [
        ToolDefinition(
            name="search_files",
            description=(
                "Search text files in scope for a literal string (or a regex with isRegex). "
                "Returns path:line: text for each match; .git, symlinks and binaries skipped."
            ),
            args_model=SearchFilesArgs,
            side_effect="read",
            replay="read-only",
            prepare=prepare,
        )
    ]
