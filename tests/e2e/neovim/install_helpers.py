"""For the install tests: a plugin manager's clone, a workspace's own server, a working turn."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.e2e.neovim.nvim_harness import REPO, Neovim

# No uv, no pipx, no relavium-lsp here: the build step falls back to a private virtualenv
# made with the system's Python 3.11.
SYSTEM_PATH = "/usr/bin:/bin"
# The installers' caches of this machine, read before the test isolation points HOME
# elsewhere (the dependencies come from there or the package index, as for a returning user),
# and the machine's TLS trust settings, as in a user's session.
TOOL_ENV = {
    "UV_CACHE_DIR": str(Path.home() / ".cache" / "uv"),
    "PIP_CACHE_DIR": str(Path.home() / ".cache" / "pip"),
    "UV_PYTHON_DOWNLOADS": "never",  # the system's Python 3.11, not a download
    **{name: os.environ[name] for name in ("SSL_CERT_FILE", "SSL_CERT_DIR") if name in os.environ},
}


def path_with(tmp_path: Path, *tools: str) -> str:
    """A PATH of the system's programs plus ``tools`` from this test run's environment."""
    directory = tmp_path / "bin"
    directory.mkdir()
    for name in tools:
        (directory / name).symlink_to(Path(sys.executable).parent / name)
    return f"{directory}:{SYSTEM_PATH}"


def clone_plugin(destination: Path) -> Path:
    """Copy the repository's files into ``destination`` as a clone of the current work has them.

    Tracked and new files, never ignored ones (``.venv``, ``node_modules``, caches): a test of
    uncommitted work sees that work, and nothing a developer's checkout holds beyond a clone.
    """
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():  # a deleted but still tracked file is listed too
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def workspace_server(workspace: Path) -> Path:
    """A ``<workspace>/.venv/bin/relavium-lsp`` that runs the real server (this test run's)."""
    launcher = workspace / ".venv" / "bin" / "relavium-lsp"
    launcher.parent.mkdir(parents=True)
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m relavium_lsp "$@"\n')
    launcher.chmod(0o755)
    return launcher


def offline_turn_works(nvim: Neovim) -> None:
    """Open a chat and complete one turn on the bundled offline model (a fresh home's)."""
    nvim.api.command("RelaviumChat")
    nvim.api.command("RelaviumSend hello")
    nvim.wait_for_turns(1)
    assert "offline demo model" in nvim.chat_text()
    assert "✗ error" not in nvim.chat_text()
