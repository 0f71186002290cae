"""The approval gate: modes, always-allow memory, timeout, failure and abort."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from relavium_lsp.tools.host import ApprovalRequest


def write(path: str, content: str = "data\n") -> dict[str, str]:
    return {"path": path, "content": content}


async def test_ask_mode_asks_for_every_side_effect_and_rejection_denies(harness, make_host) -> None:
    host = make_host(approvals=["reject"])
    ctx = harness.context(host=host, allowed_commands=["echo hi"])
    rejected = await harness.call("write_file", write("a.txt", "SECRET-CONTENT"), ctx)
    assert rejected.error_code == "tool_denied"
    assert "the user rejected" in rejected.result
    assert not (harness.workspace / "a.txt").exists()
    [request] = host.requests
    assert request == ApprovalRequest(
        session_id="session-1",
        call_id=request.call_id,
        tool_id="write_file",
        action="fs_write",
        preview=request.preview,
        change=request.change,
    )
    assert request.preview.to_wire() == {"path": "a.txt"}
    # The user sees the diff; the durable event keeps only its stat.
    assert request.change is not None and request.change.diff.unified.endswith(
        "+SECRET-CONTENT\n\\ No newline at end of file\n"
    )
    approval_events = harness.events_of("agent:approval_requested")
    assert "SECRET-CONTENT" not in repr(approval_events)
    approved = await harness.call("run_command", {"command": ["echo", "hi"]}, ctx)
    assert not approved.is_error and "hi" in approved.result
    assert host.requests[-1].action == "process"
    assert host.requests[-1].preview.command == "echo hi"
    # Reads never ask.
    (harness.workspace / "r.txt").write_text("r")
    await harness.call("read_file", {"path": "r.txt"}, ctx)
    await harness.call("list_directory", {}, ctx)
    assert len(host.requests) == 2


async def test_approve_always_is_remembered_per_tool_and_scope(harness, make_host) -> None:
    host = make_host(approvals=["approve_always"], default="reject")
    ctx = harness.context(host=host)
    (harness.workspace / "docs").mkdir()
    first = await harness.call("write_file", write("docs/a.md"), ctx)
    assert not first.is_error
    second = await harness.call("write_file", write("docs/b.md"), ctx)
    assert not second.is_error
    assert len(host.requests) == 1
    assert ctx.approvals.allows("write_file", str(harness.workspace / "docs"))
    # Another directory is another scope: it asks again (and this time is rejected).
    other = await harness.call("write_file", write("c.md"), ctx)
    assert other.error_code == "tool_denied"
    assert len(host.requests) == 2
    nested = await harness.call("write_file", write("docs/deeper/d.md"), ctx)
    assert nested.error_code == "tool_denied"


async def test_approve_always_for_a_command_covers_that_exact_argv_only(harness, make_host) -> None:
    host = make_host(approvals=["approve_always"], default="reject")
    ctx = harness.context(host=host, allowed_command_globs=["echo *"])
    assert not (await harness.call("run_command", {"command": ["echo", "one"]}, ctx)).is_error
    assert not (await harness.call("run_command", {"command": ["echo", "one"]}, ctx)).is_error
    other = await harness.call("run_command", {"command": ["echo", "two"]}, ctx)
    assert other.error_code == "tool_denied"
    assert len(host.requests) == 2


async def test_auto_edits_approves_workspace_writes_only(harness, make_host) -> None:
    extra = harness.root / "shared-docs"
    extra.mkdir()
    host = make_host(default="reject")
    ctx = harness.context(
        host=host,
        tier="project",
        approval="auto_edits",
        allowed_paths=[str(extra)],
        allowed_commands=["echo hi"],
    )
    inside = await harness.call("write_file", write("in.txt"), ctx)
    assert not inside.is_error and host.requests == []
    beyond = await harness.call("write_file", write(str(extra / "x.txt")), ctx)
    assert beyond.error_code == "tool_denied"
    command = await harness.call("run_command", {"command": ["echo", "hi"]}, ctx)
    assert command.error_code == "tool_denied"
    assert [r.action for r in host.requests] == ["fs_write", "process"]


def _init_repo(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for key, value in (("user.name", "T"), ("user.email", "t@example.com")):
        subprocess.run(["git", "-C", str(path), "config", key, value], check=True)


async def test_never_ask_asks_nothing_but_git_commit(harness, make_host) -> None:
    _init_repo(harness.workspace)
    host = make_host(approvals=["approve_always", "reject"])
    ctx = harness.context(host=host, approval="never_ask", allowed_commands=["echo hi"])
    assert not (await harness.call("write_file", write("f.txt"), ctx)).is_error
    assert not (await harness.call("run_command", {"command": ["echo", "hi"]}, ctx)).is_error
    assert host.requests == []
    commit = {"message": "first", "paths": ["f.txt"]}
    first = await harness.call("git_commit", commit, ctx)
    assert not first.is_error, first.result
    (harness.workspace / "f.txt").write_text("changed\n")
    # "Always allow" is not remembered for git_commit: it asks again, and is rejected.
    second = await harness.call("git_commit", {"message": "second", "paths": ["f.txt"]}, ctx)
    assert second.error_code == "tool_denied"
    assert [r.tool_id for r in host.requests] == ["git_commit", "git_commit"]
    assert ctx.approvals.remembered() == frozenset()


async def test_no_answer_within_the_timeout_is_a_rejection(harness, make_host) -> None:
    host = make_host(hold=True)
    ctx = harness.context(host=host, approval_timeout_s=0.05)
    outcome = await harness.call("write_file", write("late.txt"), ctx)
    assert outcome.error_code == "tool_denied"
    assert "nobody answered" in outcome.result
    assert not (harness.workspace / "late.txt").exists()
    assert host.writes == []


async def test_a_failing_host_is_a_rejection(harness) -> None:
    class BrokenHost:
        async def read_open_buffer(self, path: Path) -> str | None:
            return None

        def write_refusal(self, *, creating):
            return None

        async def write_file(self, path, text, *, label):
            raise AssertionError("must not be reached")

        async def request_approval(self, request):
            raise ConnectionError("client went away")

    ctx = harness.context(host=BrokenHost())
    outcome = await harness.call("write_file", write("x.txt"), ctx)
    assert outcome.error_code == "tool_denied"
    assert "could not be shown" in outcome.result


async def test_abort_while_waiting_cancels_cleanly_and_nothing_runs(harness, make_host) -> None:
    host = make_host(hold=True)
    ctx = harness.context(host=host)
    task = asyncio.create_task(harness.call("write_file", write("never.txt"), ctx))
    await host.asked.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert host.release is not None and host.release.cancelled()
    assert host.writes == []
    assert not (harness.workspace / "never.txt").exists()
    [result] = harness.events_of("agent:tool_result")
    assert result.error_code == "cancelled" and not result.success
    assert not ctx.approvals.allows("write_file", str(harness.workspace))
