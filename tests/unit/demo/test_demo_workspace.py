"""The demo home and sample workspace: a real git repo, and no deleting what is not ours."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from relavium_lsp.demo.client import NULL_KEYRING, server_environment
from relavium_lsp.demo.workspace import (
    DEMO_BRANCH,
    DEMO_MARKER_NAME,
    DemoPaths,
    WorkspaceSetupError,
    create_sample_workspace,
    prepare_demo_home,
    workspace_diff,
)
from relavium_lsp.llm import demo_script as script


def test_sample_workspace_is_a_committed_git_repo_on_the_demo_branch(tmp_path: Path) -> None:
    paths = DemoPaths(home=tmp_path / "demo")
    prepare_demo_home(paths)
    workspace = create_sample_workspace(paths)
    assert workspace == paths.workspace
    for relative, content in script.DEMO_FILES.items():
        assert (workspace / relative).read_text(encoding="utf-8") == content
    branch = subprocess.run(
        ["git", "rev-parse", "--abbrev-ref", "HEAD"],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert branch == DEMO_BRANCH
    assert workspace_diff(workspace, color=False) == ""
    (workspace / script.DEMO_SOURCE_PATH).write_text(script.DEMO_SOURCE_AFTER, encoding="utf-8")
    diff = workspace_diff(workspace, color=False)
    assert "+def greet(name: str) -> str:" in diff and "\x1b[" not in diff


def test_a_second_run_starts_from_a_fresh_workspace(tmp_path: Path) -> None:
    paths = DemoPaths(home=tmp_path / "demo")
    prepare_demo_home(paths)
    workspace = create_sample_workspace(paths)
    (workspace / "stray.txt").write_text("left over", encoding="utf-8")
    create_sample_workspace(paths)
    assert not (workspace / "stray.txt").exists()


def test_a_foreign_non_empty_directory_is_never_used(tmp_path: Path) -> None:
    precious = tmp_path / "projects"
    (precious / "workspace").mkdir(parents=True)
    (precious / "workspace" / "thesis.tex").write_text("years of work", encoding="utf-8")
    paths = DemoPaths(home=precious)
    for reset in (False, True):
        with pytest.raises(WorkspaceSetupError, match="not created by"):
            prepare_demo_home(paths, reset=reset)
    assert (precious / "workspace" / "thesis.tex").read_text(encoding="utf-8") == "years of work"


def test_reset_deletes_only_a_marked_demo_home(tmp_path: Path) -> None:
    paths = DemoPaths(home=tmp_path / "demo")
    assert prepare_demo_home(paths) is False
    assert (paths.home / DEMO_MARKER_NAME).is_file()
    (paths.home / "data").mkdir()
    (paths.home / "data" / "history.db").write_bytes(b"x")
    assert prepare_demo_home(paths) is False  # a second run keeps the history
    assert (paths.home / "data" / "history.db").exists()
    assert prepare_demo_home(paths, reset=True) is True
    assert not (paths.home / "data").exists()
    assert (paths.home / DEMO_MARKER_NAME).is_file()


def test_the_workspace_is_outside_the_server_data_directory(tmp_path: Path) -> None:
    # The engine refuses tool access to the directory holding the database.
    paths = DemoPaths(home=tmp_path / "demo")
    assert paths.database.parent == paths.data
    assert paths.data not in paths.workspace.parents


def test_the_server_gets_no_secrets_and_no_keychain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-should-not-pass")
    monkeypatch.setenv("RELAVIUM_DB_KEY", "ab" * 32)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    env = server_environment(tmp_path / "data", "DEBUG")
    assert "ANTHROPIC_API_KEY" not in env and "RELAVIUM_DB_KEY" not in env
    assert env["PYTHON_KEYRING_BACKEND"] == NULL_KEYRING
    assert env["RELAVIUM_HOME"] == str(tmp_path / "data")
    assert env["RELAVIUM_LOG_LEVEL"] == "DEBUG"
    assert env["PATH"] == "/usr/bin:/bin"
