"""Files a run_command changes reach the turn's checkpoints (tools/command_changes.py)."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path


class RecordingJournal:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str | None]] = []

    def before_change(self, path: Path, text: str | None) -> None:
        self.calls.append(("before", path.name, text))

    def after_change(self, path: Path, text: str | None) -> None:
        self.calls.append(("after", path.name, text))

    async def commit(self) -> None:
        self.calls.append(("commit", "", None))

    def commit_later(self) -> None:
        self.calls.append(("commit_later", "", None))


def git(workspace: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=workspace,
        check=True,
        capture_output=True,
    )


async def test_changed_created_and_deleted_files_are_journaled(harness) -> None:
    workspace: Path = harness.workspace
    git(workspace, "init", "-q")
    (workspace / "clean.txt").write_text("committed\n")
    (workspace / "gone.txt").write_text("to be removed\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "init")
    (workspace / "dirty.txt").write_text("never committed\n")
    (workspace / "clean.txt.new").write_text("replacement\n")
    script = "cp clean.txt.new clean.txt; echo more >> dirty.txt; rm gone.txt; echo hi > made.txt"
    journal = RecordingJournal()
    ctx = dataclasses.replace(
        harness.context(allowed_commands=[f"sh -c '{script}'"], approval="never_ask"),
        journal=journal,
    )
    outcome = await harness.call("run_command", {"command": ["sh", "-c", script]}, ctx)
    assert not outcome.is_error, outcome.result
    assert "Not checkpointed" not in outcome.result
    assert journal.calls == [
        ("before", "clean.txt", "committed\n"),  # from git's index
        ("after", "clean.txt", "replacement\n"),
        ("before", "dirty.txt", "never committed\n"),  # from the snapshot
        ("after", "dirty.txt", "never committed\nmore\n"),
        ("before", "gone.txt", "to be removed\n"),
        ("after", "gone.txt", None),
        ("before", "made.txt", None),  # created by the command
        ("after", "made.txt", "hi\n"),
        ("commit", "", None),  # all of them in one transaction, before the result
    ]


async def test_without_a_journal_or_a_repository_nothing_is_looked_at(harness) -> None:
    ctx = harness.context(allowed_commands=["sh -c 'echo x > f.txt'"], approval="never_ask")
    journal = RecordingJournal()
    outside_git = dataclasses.replace(ctx, journal=journal)
    outcome = await harness.call(
        "run_command", {"command": ["sh", "-c", "echo x > f.txt"]}, outside_git
    )
    assert not outcome.is_error and journal.calls == []
