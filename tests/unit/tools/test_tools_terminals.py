"""Background terminals: run_command's rules, read incrementally, killed as a group."""

from __future__ import annotations

import asyncio
import os

from tests.unit.tools.test_tools_commands import _alive, _readable

SERVER = "echo serving $$; sleep 100 & echo child $!; while read line; do :; done; sleep 100"


class LiveOutput:
    """Wraps a context's event sink to wake waiters on each ``agent:tool_output``."""

    def __init__(self, ctx) -> None:
        self.text = ""
        self._changed = asyncio.Condition()
        emit = ctx.emit

        def watch(event) -> None:
            emit(event)
            if event.type == "agent:tool_output":
                self.text += event.text
                asyncio.get_running_loop().create_task(self._notify())

        ctx.emit = watch

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, needle: str) -> str:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: needle in self.text), 60)
        return self.text


def _pids(text: str) -> tuple[int, int]:
    words = text.split()
    return int(words[words.index("serving") + 1]), int(words[words.index("child") + 1])


async def test_a_job_runs_in_the_background_and_is_killed_with_its_group(harness) -> None:
    ctx = harness.context(allowed_commands=[f"sh -c '{SERVER}'"], approval="never_ask")
    live = LiveOutput(ctx)
    started = await harness.call("terminal_start", {"command": ["sh", "-c", SERVER]}, ctx)
    assert not started.is_error, started.result
    assert started.result.startswith("Started terminal job t")
    job = started.result.split()[3].rstrip(":")
    leader, child = _pids(await live.wait_for("child "))
    assert _alive(leader) and _alive(child)
    first = await harness.call("terminal_output", {"jobId": job}, ctx)
    assert "(running)" in first.result.splitlines()[0]
    assert "serving" in first.result and "child" in first.result
    again = await harness.call("terminal_output", {"jobId": job}, ctx)
    assert again.result.splitlines()[1] == "(no new output)"
    child_exit = os.pidfd_open(child)
    try:
        killed = await harness.call("terminal_kill", {"jobId": job}, ctx)
        assert "(killed)" in killed.result
        await asyncio.wait_for(_readable(child_exit), 30)
    finally:
        os.close(child_exit)
    assert not _alive(leader) and not _alive(child)
    unknown = await harness.call("terminal_output", {"jobId": "t999"}, ctx)
    assert unknown.is_error and "no terminal job" in unknown.result


async def test_jobs_follow_the_command_rules_and_die_with_the_session(harness) -> None:
    refused = await harness.call(
        "terminal_start", {"command": ["sh", "-c", "touch pwned"]}, harness.context()
    )
    assert refused.error_code == "tool_unavailable"  # no allow-list: disabled like run_command
    ctx = harness.context(allowed_commands=[f"sh -c '{SERVER}'"])  # approval: ask
    live = LiveOutput(ctx)
    started = await harness.call("terminal_start", {"command": ["sh", "-c", SERVER]}, ctx)
    assert not started.is_error
    [asked] = harness.host.requests
    assert asked.tool_id == "terminal_start" and asked.action == "process"
    leader, child = _pids(await live.wait_for("child "))
    other = harness.context(allowed_commands=[f"sh -c '{SERVER}'"])
    other.session_id = "session-2"
    job = started.result.split()[3].rstrip(":")
    foreign = await harness.call("terminal_kill", {"jobId": job}, other)
    assert foreign.is_error and _alive(leader)  # another session cannot touch it
    child_exit = os.pidfd_open(child)
    try:
        await harness.registry.release_session("session-1")
        await asyncio.wait_for(_readable(child_exit), 30)
    finally:
        os.close(child_exit)
    assert not _alive(leader) and not _alive(child)
