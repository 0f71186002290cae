"""run_command attacks: nothing outside the allowlist executes, and no shell ever runs."""

from __future__ import annotations

import asyncio
import os
import shlex
from pathlib import Path

import pytest

from relavium_lsp.tools.base import ToolLimits
from relavium_lsp.tools.command_policy import CommandPolicy
from relavium_lsp.tools.registry import default_registry
from relavium_lsp.tools.runner import SAFE_PATH

ALLOWED = ["echo hello", "git status", "ls", "pytest -q", "env", "pwd"]
GLOBS = ["echo safe-*", "printf %s *"]

# Each of these would create ./pwned (or worse) if any shell or smuggled option ran.
ATTACKS = [
    ["echo", "hello;", "touch", "pwned"],
    ["echo hello; touch pwned"],
    ["echo", "hello", "&&", "touch", "pwned"],
    ["echo", "hello|touch pwned"],
    ["echo", "`touch pwned`"],
    ["echo", "$(touch pwned)"],
    ["echo", "hello\ntouch pwned"],
    ["sh", "-c", "touch pwned"],
    ["bash", "-c", "touch pwned"],
    ["/bin/sh", "-c", "touch pwned"],
    ["echo", "safe-$(touch pwned)"],
    ["echo", "safe-`touch pwned`"],
    ["echo", "safe-x;touch pwned"],
    ["echo", "safe-*"],
    ["echo", "safe-x", "extra"],
    ["echo", "safe-x\ntouch pwned"],
    ["printf", "%s", "a", "$(touch pwned)"],
    ["git", "-c", "core.pager=touch pwned", "status"],
    ["git", "status", "--upload-pack=touch pwned"],
    ["git", "fetch", "--upload-pack=touch pwned", "origin"],
    ["git", "-c", "core.fsmonitor=touch pwned", "status"],
    ["LD_PRELOAD=/tmp/evil.so", "ls"],
    ["env", "LD_PRELOAD=/tmp/evil.so", "touch", "pwned"],
    ["env", "-i", "touch", "pwned"],
    ["ls", "-la", "/"],
    ["ls", "../"],
    ["/tmp/evil/ls"],
    ["./ls"],
    ["ls "],
    [" ls"],
    ["LS"],
    ["pytest", "-q", "--rootdir=/", "-p", "evil_plugin"],
    ["pytest"],
    ["touch", "pwned"],
    ["echo", "hello\x00", "touch"],
    ["echo", *(["x"] * 300)],
    ["echo", "safe-\x1b[2K\x1b[1Aok"],
    ["echo", "safe-\u202etxt.exe"],
    ["printf", "%s", "\x07bell"],
]


@pytest.fixture
def command_ctx(harness):
    return harness.context(
        allowed_commands=ALLOWED, allowed_command_globs=GLOBS, approval="never_ask"
    )


@pytest.mark.parametrize("argv", ATTACKS, ids=[repr(a)[:60] for a in ATTACKS])
async def test_command_attacks_are_denied_and_nothing_runs(harness, command_ctx, argv) -> None:
    outcome = await harness.call("run_command", {"command": argv}, command_ctx)
    assert outcome.is_error
    # Over-long argv is already refused by argument validation; everything else by policy.
    assert outcome.error_code in ("tool_denied", "validation"), outcome.result
    assert not (harness.workspace / "pwned").exists()
    assert not (harness.temp_dir / "pwned").exists()


def test_there_are_at_least_twenty_command_attacks() -> None:
    assert len(ATTACKS) >= 20


async def test_exact_entry_runs_with_shell_false(harness, command_ctx) -> None:
    outcome = await harness.call("run_command", {"command": ["echo", "hello"]}, command_ctx)
    assert not outcome.is_error
    assert outcome.result.startswith("$ echo hello  (exit code 0)")
    assert "hello" in outcome.result


async def test_glob_entries_match_one_argument_per_token(harness, command_ctx) -> None:
    ok = await harness.call("run_command", {"command": ["echo", "safe-1"]}, command_ctx)
    assert not ok.is_error and "safe-1" in ok.result
    # '%' is spelled literally by the pattern, and the trailing * takes any further args.
    printf = await harness.call("run_command", {"command": ["printf", "%s", "a", "b"]}, command_ctx)
    assert not printf.is_error and "ab" in printf.result


def test_glob_metacharacters_are_allowed_only_when_spelled_literally() -> None:
    policy = CommandPolicy.from_lists([], ["grep -e [;] *", "*", "ec?o hi"])
    assert policy.check(["grep", "-e", ";", "file.txt"]) == "grep -e [;] *"
    assert len(policy.globs) == 1  # a wildcard program name is never accepted
    with pytest.raises(Exception, match="metacharacter"):
        policy.check(["grep", "-e", ";", "$(x)"])


async def test_environment_is_minimal_and_inherits_no_secrets(
    harness, command_ctx, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-must-not-leak")
    monkeypatch.setenv("RELAVIUM_DB_KEY", "ab" * 32)
    monkeypatch.setenv("LD_PRELOAD", "/tmp/evil.so")
    outcome = await harness.call("run_command", {"command": ["env"]}, command_ctx)
    assert not outcome.is_error
    lines = set(outcome.result.splitlines()[1:])
    assert f"PATH={SAFE_PATH}" in lines
    assert f"HOME={harness.temp_dir}" in lines
    assert "LANG=C.UTF-8" in lines
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "RELAVIUM_DB_KEY", "LD_PRELOAD"):
        assert not any(line.startswith(name + "=") for line in lines)
    assert "must-not-leak" not in outcome.result and "ab" * 32 not in outcome.result


async def test_cwd_is_jailed(harness, command_ctx) -> None:
    (harness.workspace / "sub").mkdir()
    inside = await harness.call("run_command", {"command": ["pwd"], "cwd": "sub"}, command_ctx)
    assert inside.result.splitlines()[1] == str(harness.workspace / "sub")
    for cwd in ("../outside", "/", "/proc/self/cwd", "~"):
        outside = await harness.call("run_command", {"command": ["pwd"], "cwd": cwd}, command_ctx)
        assert outside.error_code == "tool_denied"


async def test_empty_allowlists_disable_the_tool(harness) -> None:
    ctx = harness.context(approval="never_ask")
    outcome = await harness.call("run_command", {"command": ["ls"]}, ctx)
    assert outcome.error_code == "tool_unavailable"
    assert "disabled" in outcome.result


async def test_non_zero_exit_is_a_failed_result_with_output(harness) -> None:
    ctx = harness.context(allowed_commands=["ls no-such-file"], approval="never_ask")
    outcome = await harness.call("run_command", {"command": ["ls", "no-such-file"]}, ctx)
    assert outcome.error_code == "tool_failed"
    assert "exit code 2" in outcome.result and "No such file" in outcome.result  # stderr too


async def test_timeout_kills_the_whole_process_group(harness) -> None:
    harness.registry = default_registry(limits=ToolLimits(command_timeout_s=0.5))
    script = "sleep 30 & echo $! > child.pid; wait"
    ctx = harness.context(allowed_commands=[f"sh -c '{script}'"], approval="never_ask")
    outcome = await harness.call("run_command", {"command": ["sh", "-c", script]}, ctx)
    assert outcome.error_code == "tool_failed"
    assert "killed after the 0.5 s timeout" in outcome.result
    child = int((harness.workspace / "child.pid").read_text())
    assert not _alive(child)


async def test_output_is_byte_bounded(harness) -> None:
    harness.registry = default_registry(
        limits=ToolLimits(command_timeout_s=0.5, command_max_output_bytes=1000)
    )
    ctx = harness.context(allowed_commands=["yes"], approval="never_ask")
    outcome = await harness.call("run_command", {"command": ["yes"]}, ctx)
    assert "bytes of output omitted" in outcome.result
    assert outcome.result.count("y\n") <= 500


async def test_abort_kills_a_running_command(harness) -> None:
    ready = harness.workspace / "ready"
    os.mkfifo(ready)
    script = "echo $$ > ready; exec sleep 30"
    ctx = harness.context(allowed_commands=[f"sh -c '{script}'"], approval="never_ask")
    task = asyncio.create_task(harness.call("run_command", {"command": ["sh", "-c", script]}, ctx))
    pid = int(await asyncio.to_thread(Path(ready).read_text))
    assert _alive(pid)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _alive(pid)
    assert harness.events_of("agent:tool_result")[-1].error_code == "cancelled"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


async def test_commands_run_on_a_terminal_and_stream_their_output(harness) -> None:
    script = "test -t 1 && echo on-a-tty; test -t 0 || echo stdin-not-a-tty; echo to-stderr >&2"
    ctx = harness.context(allowed_commands=[f"sh -c '{script}'"], approval="never_ask")
    outcome = await harness.call("run_command", {"command": ["sh", "-c", script]}, ctx)
    assert not outcome.is_error, outcome.result
    assert outcome.result.splitlines()[1:] == ["on-a-tty", "stdin-not-a-tty", "to-stderr"]
    streamed = harness.events_of("agent:tool_output")
    assert streamed and {event.tool_id for event in streamed} == {"run_command"}
    [call] = harness.events_of("agent:tool_call")
    assert {event.call_id for event in streamed} == {call.call_id}
    assert "".join(event.text for event in streamed) == "on-a-tty\nstdin-not-a-tty\nto-stderr\n"
    types = [event.type for event in harness.events]
    assert types.index("agent:tool_output") < types.index("agent:tool_result")


async def test_ten_megabytes_of_output_are_capped_streamed_within_bounds_and_kept(harness) -> None:
    size = 10 * 1024 * 1024
    script = f"yes 0123456789abcdef | head -c {size}; echo; echo THE-END"
    ctx = harness.context(allowed_commands=[f"sh -c '{script}'"], approval="never_ask")
    outcome = await harness.call("run_command", {"command": ["sh", "-c", script]}, ctx)
    assert not outcome.is_error
    # The model sees a bounded preview and where to read the rest.
    assert len(outcome.result.encode()) < 60 * 1024
    assert "read_tool_output" in outcome.result
    [kept] = harness.artifacts.saved.values()
    limit = ToolLimits().command_max_output_bytes
    assert len(kept.encode()) < limit + 1024
    assert "bytes of output omitted" in kept and kept.rstrip().endswith("THE-END")
    streamed = harness.events_of("agent:tool_output")
    assert sum(len(event.text.encode()) for event in streamed) < 300 * 1024
    assert streamed[-1].truncated
    assert len(streamed) < 200


async def test_abort_kills_the_process_group_of_sleep_100_with_no_orphan(harness) -> None:
    script = "sleep 100 & echo child $!; exec sleep 100"
    ctx = harness.context(allowed_commands=[f"sh -c '{script}'"], approval="never_ask")
    started = asyncio.Event()
    emit = ctx.emit

    def watch(event) -> None:
        emit(event)
        if event.type == "agent:tool_output" and "child" in event.text:
            started.set()

    ctx.emit = watch
    task = asyncio.create_task(harness.call("run_command", {"command": ["sh", "-c", script]}, ctx))
    await asyncio.wait_for(started.wait(), 60)
    [text] = [e.text for e in harness.events_of("agent:tool_output") if "child" in e.text]
    child = int(text.split()[1])
    leader = _group_leader(child)
    assert _alive(child) and _alive(leader)
    child_exit = os.pidfd_open(child)  # readable once the process has exited
    try:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not _alive(leader), "the sleep 100 the shell became is gone"
        # SIGKILL went to the whole group; wait (boundedly) until the kernel finished it.
        await asyncio.wait_for(_readable(child_exit), 30)
        assert not _alive(child), "its background sleep 100 is gone too: no orphan"
    finally:
        os.close(child_exit)
    assert harness.events_of("agent:tool_result")[-1].error_code == "cancelled"


async def _readable(descriptor: int) -> None:
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    loop.add_reader(descriptor, lambda: ready.done() or ready.set_result(None))
    try:
        await ready
    finally:
        loop.remove_reader(descriptor)


def _group_leader(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().split(") ", 1)[1].split()[2])


async def test_abort_kills_a_grandchild_that_left_the_group_with_setsid(harness) -> None:
    """Issue 35: ``setsid`` puts a grandchild in a session (and group) of its own, and it
    forks again and its parent exits, so it is nobody's child in the tool's tree any more:
    killing the process group missed it. The command's own subreaper finds it."""
    marker = harness.workspace / "gc.pid"
    script = "setsid sh -c 'sleep 100 & echo $! > gc.pid'; echo started; exec sleep 100"
    ctx = harness.context(allowed_commands=[shlex.join(["sh", "-c", script])], approval="never_ask")
    started = asyncio.Event()
    emit = ctx.emit

    def watch(event) -> None:
        emit(event)
        if event.type == "agent:tool_output" and "started" in event.text:
            started.set()

    ctx.emit = watch
    task = asyncio.create_task(harness.call("run_command", {"command": ["sh", "-c", script]}, ctx))
    await asyncio.wait_for(started.wait(), 60)
    grandchild = int(marker.read_text())
    assert _alive(grandchild)
    # It really left: its group is the one that leads the session setsid made.
    assert _group_leader(grandchild) == os.getsid(grandchild)
    gone = os.pidfd_open(grandchild)
    try:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(_readable(gone), 30)
        assert not _alive(grandchild)
    finally:
        os.close(gone)
