"""The demo's places on disk and its throw-away sample workspace (a small git repository).

Layout of the demo home (default ``~/.relavium-demo``; never the real ``~/.relavium``)::

    <home>/data/        RELAVIUM_HOME of the demo's servers: history.db, history.key, logs/
                        (logs/relavium-lsp.log from the servers, logs/relavium-demo.log)
    <home>/workspace/   the sample project, recreated from scratch on every run
    <home>/exports/     the exported workflow, as the demo "editor" received it
    <home>/RELAVIUM-DEMO.txt  marks the directory as the demo's own (it deletes inside it)

The workspace sits outside ``data/`` on purpose: the engine refuses tool access to the
directory that holds the history database.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from relavium_lsp.llm import demo_script as script
from relavium_lsp.logs import LOG_FILE_NAME
from relavium_lsp.paths import HISTORY_DB_NAME, KEY_FILE_NAME, ensure_private_dir

DEMO_HOME_NAME = ".relavium-demo"
DEMO_BRANCH = "demo/type-hints"
DEMO_LOG_NAME = "relavium-demo.log"
DEMO_MARKER_NAME = "RELAVIUM-DEMO.txt"
GIT_TIMEOUT_S = 30
# Identity for the demo's own commit, passed per command: the user's git config is untouched.
_IDENTITY = ("-c", "user.name=Relavium Demo", "-c", "user.email=demo@relavium.invalid")


class WorkspaceSetupError(RuntimeError):
    """The sample workspace could not be created (git missing or failing)."""


@dataclass(frozen=True)
class DemoPaths:
    """Every path the demo reads or writes."""

    home: Path

    @property
    def data(self) -> Path:
        """``RELAVIUM_HOME`` for the demo's server processes."""
        return self.home / "data"

    @property
    def database(self) -> Path:
        """The demo's encrypted history database."""
        return self.data / HISTORY_DB_NAME

    @property
    def key_file(self) -> Path:
        """Where the demo servers keep the database key (they never use the OS keychain)."""
        return self.data / KEY_FILE_NAME

    @property
    def server_log(self) -> Path:
        """The servers' rotating log file."""
        return self.data / "logs" / LOG_FILE_NAME

    @property
    def demo_log(self) -> Path:
        """The demo client's own log (next to the servers' log, never mixed into it)."""
        return self.data / "logs" / DEMO_LOG_NAME

    @property
    def workspace(self) -> Path:
        """The sample project."""
        return self.home / "workspace"

    @property
    def exports(self) -> Path:
        """Where the demo keeps the untitled export it was sent."""
        return self.home / "exports"


def prepare_demo_home(paths: DemoPaths, *, reset: bool = False) -> bool:
    """Make sure ``paths.home`` is a demo home (created here, or by an earlier run).

    An existing non-empty directory without the demo's marker file is refused rather than
    used: the demo deletes and recreates folders inside its home, which must never hit a
    directory someone passed by mistake (``--home ~``). Returns whether a reset deleted data.
    """
    home = paths.home
    marker = home / DEMO_MARKER_NAME
    if home.exists() and not marker.is_file() and any(home.iterdir()):
        raise WorkspaceSetupError(
            f"{home} is not empty and was not created by `relavium-lsp demo`; choose another --home"
        )
    deleted = False
    if reset and marker.is_file():
        shutil.rmtree(home)
        deleted = True
    ensure_private_dir(home)
    if not marker.exists():
        marker.write_text(
            "Created by `relavium-lsp demo`; delete this directory to forget the demo.\n",
            encoding="utf-8",
        )
    return deleted


def default_demo_home() -> Path:
    """``~/.relavium-demo``."""
    return Path.home() / DEMO_HOME_NAME


def _git_env() -> dict[str, str]:
    # No system or global git config: a user's hooks, signing or templates must not run here.
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0")
    return env


def git(workspace: Path, *args: str) -> str:
    """Run git in ``workspace`` and return its standard output."""
    executable = shutil.which("git")
    if executable is None:
        raise WorkspaceSetupError("git is not installed (the demo workspace is a git repository)")
    try:
        completed = subprocess.run(
            [executable, *args],
            cwd=workspace,
            env=_git_env(),
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise WorkspaceSetupError(f"git {args[0]} took longer than {GIT_TIMEOUT_S} s") from None
    if completed.returncode != 0:
        detail = completed.stderr.strip().splitlines()[-1:] or ["(no message)"]
        raise WorkspaceSetupError(f"git {args[0]} failed: {detail[0]}")
    return completed.stdout


def create_sample_workspace(paths: DemoPaths) -> Path:
    """(Re)create the sample project from the demo script, committed on :data:`DEMO_BRANCH`.

    Call :func:`prepare_demo_home` first: it is what makes deleting the old workspace safe.
    """
    workspace = paths.workspace
    if workspace.exists():
        shutil.rmtree(workspace)
    workspace.mkdir()
    for relative, content in script.DEMO_FILES.items():
        target = workspace / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    git(workspace, "init", "--quiet")
    # symbolic-ref rather than --initial-branch: it works with any git version.
    git(workspace, "symbolic-ref", "HEAD", f"refs/heads/{DEMO_BRANCH}")
    git(workspace, "add", "--all")
    git(workspace, *_IDENTITY, "commit", "--quiet", "--no-gpg-sign", "-m", "Sample project")
    return workspace


def workspace_diff(workspace: Path, *, color: bool) -> str:
    """``git diff`` of the workspace against its commit."""
    return git(workspace, "diff", "--color=always" if color else "--no-color")
