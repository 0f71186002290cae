"""``run_command``: an allow-listed argv, executed without a shell.

Policy is :class:`~relavium_lsp.tools.command_policy.CommandPolicy`; execution is
:func:`~relavium_lsp.tools.runner.run_process` (minimal environment with ``HOME`` and
``TMPDIR`` = the server temp dir, process-group kill on timeout or abort, byte-bounded
output). ``cwd`` is jailed. A bare program name is looked up on the fixed safe PATH, a
relative path (``./scripts/test.sh``) is jailed against ``cwd``, an absolute one is used
as listed. The model cannot set the environment, the timeout or the output cap.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from dataclasses import replace

from pydantic import Field

from relavium_lsp.contracts.events import ApprovalPreview
from relavium_lsp.errors import ToolError
from relavium_lsp.tools.base import ToolCallContext
from relavium_lsp.tools.command_changes import record_after, snapshot_before
from relavium_lsp.tools.command_policy import CommandPolicy
from relavium_lsp.tools.definition import (
    ApprovalNeed,
    PreparedCall,
    ToolArgs,
    ToolDefinition,
    ToolLimits,
    ToolRun,
)
from relavium_lsp.tools.jail import ScopeRoots, resolve_in_scope
from relavium_lsp.tools.runner import SAFE_PATH, ProcessResult, minimal_env, run_process


class RunCommandArgs(ToolArgs):
    """Arguments of ``run_command``."""

    command: list[str] = Field(
        min_length=1,
        max_length=256,
        description='The argv, e.g. ["pytest", "-q"]. No shell: no pipes, globs or $VARS.',
    )
    cwd: str | None = Field(
        default=None, max_length=4096, description="Working directory (default: workspace)."
    )


def render_result(display: str, result: ProcessResult, timeout_s: float) -> ToolRun:
    """The model-facing text of a finished command."""
    if result.timed_out:
        status = f"killed after the {timeout_s:g} s timeout"
    else:
        status = f"exit code {result.exit_code}"
    parts = [f"$ {display}  ({status})"]
    stdout, stderr = result.text("stdout"), result.text("stderr")
    if stdout:
        parts += ["--- stdout ---", stdout.rstrip("\n")]
    if stderr:
        parts += ["--- stderr ---", stderr.rstrip("\n")]
    if not stdout and not stderr:
        parts.append("(no output)")
    failed = result.timed_out or result.exit_code != 0
    return ToolRun("\n".join(parts), failed=failed, error_code="tool_failed" if failed else None)


def process_tools(limits: ToolLimits) -> list[ToolDefinition[RunCommandArgs]]:
    """The ``run_command`` tool with the given limits."""

    async def prepare(args: RunCommandArgs, ctx: ToolCallContext) -> PreparedCall:
        policy = CommandPolicy.from_lists(
            ctx.policy.allowed_commands, ctx.policy.allowed_command_globs
        )
        argv = list(args.command)
        policy.check(argv)
        roots = ScopeRoots.for_call(ctx)
        cwd = resolve_in_scope(args.cwd or ".", roots, must_exist=True, for_write=False)
        if not cwd.is_dir():
            raise ToolError(f"cwd {args.cwd!r} is not a directory")
        program = argv[0]
        if "/" not in program:
            found = shutil.which(program, path=SAFE_PATH)
            if found is None:
                raise ToolError(f"{program!r} was not found on the safe PATH ({SAFE_PATH})")
            executable = found
        elif os.path.isabs(program):
            executable = program
        else:
            executable = str(
                resolve_in_scope(str(cwd / program), roots, must_exist=True, for_write=False)
            )
        display = shlex.join(argv)

        async def run() -> ToolRun:
            # The files it changes are checkpointed like the file tools' (§6.3).
            before = await snapshot_before(ctx, cwd)
            result = await run_process(
                [executable, *argv[1:]],
                cwd=cwd,
                env=minimal_env(ctx.temp_dir, ctx.temp_dir),
                timeout_s=limits.command_timeout_s,
                max_output_bytes=limits.command_max_output_bytes,
            )
            rendered = render_result(display, result, limits.command_timeout_s)
            note = await record_after(ctx, before) if before is not None else ""
            return replace(rendered, text=f"{rendered.text}\n{note}") if note else rendered

        return PreparedCall(
            run=run,
            approval=ApprovalNeed(
                action="process",
                preview=ApprovalPreview(command=display, path=roots.display(cwd)),
                scope_key=json.dumps({"cwd": str(cwd), "argv": argv}),
            ),
        )

    return [
        ToolDefinition(
            name="run_command",
            description=(
                "Run one allow-listed command (argv list, no shell) in the workspace and "
                "return its exit code and output. Only commands the project allows run."
            ),
            args_model=RunCommandArgs,
            side_effect="process",
            replay="side-effecting",
            prepare=prepare,
        )
    ]
