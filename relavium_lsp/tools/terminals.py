"""Background terminals: ``terminal_start`` / ``terminal_output`` / ``terminal_kill``.

For commands that keep running (a dev server, a watcher, a long test run): ``terminal_start``
applies exactly ``run_command``'s rules (allow-list, jail, approval) and starts the command
on its own PTY (:class:`~relavium_lsp.tools.pty_runner.PtyProcess`), returning a job id at
once; its output streams live as ``agent:tool_output`` of the start call. ``terminal_output``
returns what the job wrote since the last read (head and tail within a cap) and whether it
still runs; ``terminal_kill`` kills its process group.

Jobs belong to their session and die with it: :meth:`TerminalJobs.release_session` (the
engine calls it when a session ends) and :meth:`TerminalJobs.close` (engine shutdown) kill
them; a job also dies at ``terminal_max_lifetime_s``. A session runs at most
``terminal_max_jobs`` at once.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from relavium_lsp.errors import ToolError
from relavium_lsp.tools.base import (
    PreparedCall,
    ToolArgs,
    ToolCallContext,
    ToolDefinition,
    ToolLimits,
    ToolRun,
)
from relavium_lsp.tools.output_stream import OutputStream
from relavium_lsp.tools.process import CheckedCommand, RunCommandArgs, check_command
from relavium_lsp.tools.pty_runner import OutputKeeper, PtyProcess
from relavium_lsp.tools.runner import minimal_env


@dataclass
class Job:
    """One background command of a session."""

    job_id: str
    display: str
    process: PtyProcess
    unread: OutputKeeper
    stream: OutputStream
    watcher: asyncio.Task[None] | None = None
    killed: bool = False
    lifetime_ended: bool = False
    finished: asyncio.Event = field(default_factory=asyncio.Event)

    def status(self) -> str:
        """``running``, or how it ended."""
        if not self.finished.is_set():
            return "running"
        if self.killed:
            return "killed"
        if self.lifetime_ended:
            return "killed at the lifetime limit"
        return f"exited with code {self.process.process.returncode}"


class TerminalJobs:
    """Every background job of this process, by session."""

    def __init__(self, limits: ToolLimits) -> None:
        self._limits = limits
        self._jobs: dict[str, dict[str, Job]] = {}
        self._ids = itertools.count(1)

    def running(self, session_id: str) -> list[Job]:
        """The session's jobs that have not finished."""
        return [job for job in self._jobs.get(session_id, {}).values() if not job.finished.is_set()]

    def get(self, session_id: str, job_id: str) -> Job:
        """A job of this session (another session's ids are unknown here)."""
        job = self._jobs.get(session_id, {}).get(job_id)
        if job is None:
            known = ", ".join(self._jobs.get(session_id, {})) or "none"
            raise ToolError(f"no terminal job {job_id!r} in this session (jobs: {known})")
        return job

    async def start(self, ctx: ToolCallContext, checked: CheckedCommand) -> Job:
        """Start a checked command in the background for the call's session."""
        if len(self.running(ctx.session_id)) >= self._limits.terminal_max_jobs:
            raise ToolError(
                f"this session already runs {self._limits.terminal_max_jobs} terminal jobs; "
                "kill one with terminal_kill first"
            )
        unread = OutputKeeper(self._limits.command_max_output_bytes)
        stream = OutputStream(ctx.emit, "terminal_start", ctx.call_id)

        def on_output(text: str) -> None:
            unread.add(text.encode("utf-8"))
            stream.write(text)

        process = await PtyProcess.start(
            checked.argv,
            cwd=checked.cwd,
            env=minimal_env(ctx.temp_dir, ctx.temp_dir),
            keep_bytes=0,
            on_output=on_output,
        )
        job = Job(f"t{next(self._ids)}", checked.display, process, unread, stream)
        self._jobs.setdefault(ctx.session_id, {})[job.job_id] = job
        job.watcher = asyncio.create_task(self._watch(job), name=f"terminal {job.job_id}")
        return job

    async def _watch(self, job: Job) -> None:
        try:
            async with asyncio.timeout(self._limits.terminal_max_lifetime_s):
                await job.process.wait()
        except TimeoutError:
            job.lifetime_ended = True
        finally:
            await job.process.stop()
            job.stream.close()
            job.finished.set()

    def read(self, job: Job) -> str:
        """What the job wrote since the last read, then empties its buffer."""
        text = job.unread.text()
        job.unread = OutputKeeper(self._limits.command_max_output_bytes)
        return text

    async def kill(self, job: Job) -> None:
        """Kill the job's process group and wait until it is reaped."""
        if not job.finished.is_set():
            job.killed = True
            job.process.kill()
        await job.finished.wait()

    async def release_session(self, session_id: str) -> None:
        """Kill every job of a session (it ended)."""
        jobs = list(self._jobs.pop(session_id, {}).values())
        await asyncio.gather(*(self.kill(job) for job in jobs), return_exceptions=True)

    async def close(self) -> None:
        """Kill every job of every session (the engine is shutting down)."""
        for session_id in list(self._jobs):
            await self.release_session(session_id)


class TerminalOutputArgs(ToolArgs):
    """Arguments of ``terminal_output``."""

    job_id: str = Field(min_length=1, max_length=20, description="The id terminal_start gave.")


class TerminalKillArgs(ToolArgs):
    """Arguments of ``terminal_kill``."""

    job_id: str = Field(min_length=1, max_length=20, description="The id terminal_start gave.")


def _report(job: Job, text: str) -> str:
    body = text.rstrip("\n") or "(no new output)"
    return f"[{job.job_id}] $ {job.display}  ({job.status()})\n{body}"


def terminal_tools(jobs: TerminalJobs) -> list[ToolDefinition[Any]]:
    """``terminal_start``, ``terminal_output`` and ``terminal_kill`` over one job table."""

    async def prepare_start(args: RunCommandArgs, ctx: ToolCallContext) -> PreparedCall:
        checked = check_command(args, ctx)  # refuse before anyone is asked to approve

        async def run() -> ToolRun:
            job = await jobs.start(ctx, checked)
            return ToolRun(
                f"Started terminal job {job.job_id}: $ {job.display}\n"
                f"Read its output with terminal_output(jobId={job.job_id!r}); "
                f"stop it with terminal_kill. It stops when the session ends."
            )

        return PreparedCall(run=run, approval=checked.approval)

    async def prepare_output(args: TerminalOutputArgs, ctx: ToolCallContext) -> PreparedCall:
        job = jobs.get(ctx.session_id, args.job_id)

        async def run() -> ToolRun:
            return ToolRun(_report(job, jobs.read(job)))

        return PreparedCall(run=run)

    async def prepare_kill(args: TerminalKillArgs, ctx: ToolCallContext) -> PreparedCall:
        job = jobs.get(ctx.session_id, args.job_id)

        async def run() -> ToolRun:
            await jobs.kill(job)
            return ToolRun(_report(job, jobs.read(job)))

        return PreparedCall(run=run)

    return [
        ToolDefinition(
            name="terminal_start",
            description=(
                "Start an allow-listed command (argv list, no shell) in the background on a "
                "terminal, e.g. a dev server or watcher; returns a job id at once. Same rules "
                "and approval as run_command. Jobs stop when the session ends."
            ),
            args_model=RunCommandArgs,
            side_effect="process",
            replay="side-effecting",
            prepare=prepare_start,
        ),
        ToolDefinition(
            name="terminal_output",
            description=(
                "New output of a background terminal job since the last read, and whether "
                "it still runs."
            ),
            args_model=TerminalOutputArgs,
            side_effect="read",
            replay="side-effecting",
            prepare=prepare_output,
        ),
        ToolDefinition(
            name="terminal_kill",
            description="Stop a background terminal job (its whole process group).",
            args_model=TerminalKillArgs,
            side_effect="process",
            replay="side-effecting",
            prepare=prepare_kill,
        ),
    ]
