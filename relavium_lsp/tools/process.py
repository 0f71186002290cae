"""``run_command``: an allow-listed argv, executed without a shell, on a terminal.

Policy is :class:`~relavium_lsp.tools.command_policy.CommandPolicy`; execution is
:func:`~relavium_lsp.tools.pty_runner.run_in_pty` (a PTY for stdout/stderr, minimal
environment with ``HOME`` and ``TMPDIR`` = the server temp dir, process-group kill on timeout
or abort, head and tail of the output kept up to a byte cap). While it runs, its output
streams as throttled ``agent:tool_output`` events (:mod:`relavium_lsp.tools.output_stream`);
the kept output is the result, and the registry keeps the full result as an artifact when
the model's preview is cut. ``cwd`` is jailed. A bare program name is looked up on the fixed
safe PATH, a relative path (``./scripts/test.sh``) is jailed against ``cwd``, an absolute one
is used as listed. The model cannot set the environment, the timeout or the output cap.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import Field

from relavium_lsp.contracts.events import ApprovalPreview
from relavium_lsp.errors import ToolError
from relavium_lsp.tools.base import (
    ApprovalNeed,
    PreparedCall,
    ToolArgs,
    ToolCallContext,
    ToolDefinition,
    ToolLimits,
    ToolRun,
)
from relavium_lsp.tools.command_changes import record_after, snapshot_before
from relavium_lsp.tools.command_policy import CommandPolicy
from relavium_lsp.tools.jail import resolve_in_scope
from relavium_lsp.tools.output_stream import OutputStream
from relavium_lsp.tools.pty_runner import PtyResult, run_in_pty
from relavium_lsp.tools.runner import SAFE_PATH, minimal_env


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


def render_result(display: str, result: PtyResult, timeout_s: float) -> ToolRun:
    """The model-facing text of a finished command: status line, then its terminal output."""
    if result.timed_out:
        status = f"killed after the {timeout_s:g} s timeout"
    else:
        status = f"exit code {result.exit_code}"
    parts = [f"$ {display}  ({status})"]
    output = result.output.rstrip("\n")
    parts.append(output if output else "(no output)")
    failed = result.timed_out or result.exit_code != 0
    return ToolRun("\n".join(parts), failed=failed, error_code="tool_failed" if failed else None)


@dataclass(frozen=True)
class CheckedCommand:
    """A command that passed policy: what to exec, where, and what the user approves."""

    argv: list[str]  # argv[0] is the resolved executable
    cwd: Path
    display: str
    approval: ApprovalNeed


def check_command(args: RunCommandArgs, ctx: ToolCallContext) -> CheckedCommand:
    """Allow-list, jail and executable lookup for ``run_command`` and ``terminal_start``."""
    policy = CommandPolicy.from_lists(ctx.policy.allowed_commands, ctx.policy.allowed_command_globs)
    argv = list(args.command)
    policy.check(argv)
    roots = ctx.scope_roots()
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
    return CheckedCommand(
        argv=[executable, *argv[1:]],
        cwd=cwd,
        display=display,
        approval=ApprovalNeed(
            action="process",
            preview=ApprovalPreview(command=display, path=roots.display(cwd)),
            scope_key=json.dumps({"cwd": str(cwd), "argv": argv}),
        ),
    )


def process_tools(limits: ToolLimits) -> list[ToolDefinition[RunCommandArgs]]:
    """The ``run_command`` tool with the given limits."""

    async def prepare(args: RunCommandArgs, ctx: ToolCallContext) -> PreparedCall:
        checked = check_command(args, ctx)

        async def run() -> ToolRun:
            # The files it changes are checkpointed like the file tools' (§6.3).
            before = await snapshot_before(ctx, checked.cwd)
            stream = OutputStream(ctx.emit, "run_command", ctx.call_id)
            try:
                result = await run_in_pty(
                    checked.argv,
                    cwd=checked.cwd,
                    env=minimal_env(ctx.temp_dir, ctx.temp_dir),
                    timeout_s=limits.command_timeout_s,
                    keep_bytes=limits.command_max_output_bytes,
                    on_output=stream.write,
                )
            finally:
                stream.close()
            rendered = render_result(checked.display, result, limits.command_timeout_s)
            note = await record_after(ctx, before) if before is not None else ""
            return replace(rendered, text=f"{rendered.text}\n{note}") if note else rendered

        return PreparedCall(run=run, approval=checked.approval)

    return [
        ToolDefinition(
            name="run_command",
            description=(
                "Run one allow-listed command (argv list, no shell) in the workspace on a "
                "terminal and return its exit code and output (stdout and stderr together; "
                "the user watches it live). Only commands the project allows run."
            ),
            args_model=RunCommandArgs,
            side_effect="process",
            replay="side-effecting",
            prepare=prepare,
        )
    ]
