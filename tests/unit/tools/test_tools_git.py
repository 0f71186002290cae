"""git_status / git_commit against a real repository, including hostile repo config."""

from __future__ import annotations

import subprocess

import pytest


def git(repo, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(harness):
    ws = harness.workspace
    git(ws, "init", "-q", "-b", "main")
    git(ws, "config", "user.name", "Test User")
    git(ws, "config", "user.email", "test@example.com")
    (ws / "tracked.txt").write_text("one\n")
    git(ws, "add", "tracked.txt")
    git(ws, "commit", "-q", "-m", "initial")
    return ws


async def test_git_status_reports_branch_and_changes(harness, repo) -> None:
    (repo / "tracked.txt").write_text("one\ntwo\n")
    (repo / "new.txt").write_text("new\n")
    outcome = await harness.call("git_status", {})
    assert not outcome.is_error, outcome.result
    assert "# branch.head main" in outcome.result
    assert "? new.txt" in outcome.result
    assert "tracked.txt | 1 +" in outcome.result
    assert harness.host.requests == []


async def test_hostile_repo_config_runs_nothing(harness, repo) -> None:
    hook = repo / "evil.sh"
    hook.write_text(f"#!/bin/sh\ntouch {repo}/pwned\n")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(hook))
    git(repo, "config", "core.pager", str(hook))
    git(repo, "config", "pager.status", "true")
    git(repo, "config", "diff.external", str(hook))
    (repo / "tracked.txt").write_text("changed\n")
    outcome = await harness.call("git_status", {})
    assert not outcome.is_error, outcome.result
    assert not (repo / "pwned").exists()


async def test_git_commit_always_asks_and_commits_exact_paths(harness, repo, make_host) -> None:
    host = make_host(approvals=["approve"])
    ctx = harness.context(host=host, approval="never_ask")
    (repo / "tracked.txt").write_text("edited\n")
    (repo / "added.txt").write_text("added\n")
    (repo / "left-out.txt").write_text("not committed\n")
    message = "Fix things\n\n--amend -m evil; $(touch pwned)"
    outcome = await harness.call(
        "git_commit", {"message": message, "paths": ["tracked.txt", "added.txt"]}, ctx
    )
    assert not outcome.is_error, outcome.result
    [request] = host.requests
    assert request.action == "process"
    assert request.preview.command == "git commit -m 'Fix things' -- tracked.txt added.txt"
    assert git(repo, "log", "-1", "--format=%B").strip() == message.strip()
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [
        "added.txt",
        "tracked.txt",
    ]
    assert "?? left-out.txt" in git(repo, "status", "--porcelain")
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "2"
    assert not (repo / "pwned").exists()


async def test_commit_subject_in_the_prompt_is_printable(harness, repo, make_host) -> None:
    host = make_host(approvals=["reject"])
    ctx = harness.context(host=host)
    message = "Harmless\x1b[2K\u202e subject\nbody"
    await harness.call("git_commit", {"message": message, "paths": ["tracked.txt"]}, ctx)
    command = host.requests[0].preview.command
    assert "\x1b" not in command and "\u202e" not in command
    assert command.startswith("git commit -m 'Harmless?[2K? subject'")


async def test_git_commit_runs_no_hooks(harness, repo, make_host) -> None:
    hooks = repo / ".git" / "hooks"
    for name in ("pre-commit", "commit-msg", "post-commit"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {repo}/pwned-{name}\n")
        (hooks / name).chmod(0o755)
    ctx = harness.context(host=make_host(approvals=["approve"]))
    (repo / "tracked.txt").write_text("hooked\n")
    outcome = await harness.call("git_commit", {"message": "m", "paths": ["tracked.txt"]}, ctx)
    assert not outcome.is_error, outcome.result
    assert list(repo.glob("pwned-*")) == []


@pytest.mark.parametrize(
    "path",
    [
        "--amend",
        "-m",
        "--upload-pack=touch pwned",
        ":(top)tracked.txt",
        ":!tracked.txt",
        "../outside/x.txt",
        "/etc/passwd",
        ".git/config",
    ],
)
async def test_git_commit_refuses_hostile_pathspecs(harness, repo, make_host, path) -> None:
    host = make_host(approvals=["approve"])
    ctx = harness.context(host=host)
    (repo / "tracked.txt").write_text("x\n")
    outcome = await harness.call("git_commit", {"message": "m", "paths": [path]}, ctx)
    assert outcome.error_code == "tool_denied"
    assert host.requests == []
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "1"


async def test_git_commit_pathspecs_are_literal(harness, repo, make_host) -> None:
    (repo / "a.py").write_text("a\n")
    ctx = harness.context(host=make_host(approvals=["approve"]))
    outcome = await harness.call("git_commit", {"message": "m", "paths": ["*.py"]}, ctx)
    assert outcome.error_code == "tool_failed"
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "1"


async def test_git_commit_rejected_makes_no_commit(harness, repo, make_host) -> None:
    ctx = harness.context(host=make_host(approvals=["reject"]), approval="never_ask")
    (repo / "tracked.txt").write_text("x\n")
    outcome = await harness.call("git_commit", {"message": "m", "paths": ["tracked.txt"]}, ctx)
    assert outcome.error_code == "tool_denied"
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "1"
    assert git(repo, "diff", "--cached", "--name-only") == ""
