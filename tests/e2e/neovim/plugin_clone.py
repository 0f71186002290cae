"""The repository as a plugin manager's clone of it, and a turn that proves a setup works."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.e2e.neovim.nvim_harness import REPO, Neovim


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


def offline_turn_works(nvim: Neovim) -> None:
    """Open a chat and complete one turn on the bundled offline model (a fresh home's)."""
    nvim.api.command("RelaviumChat")
    nvim.api.command("RelaviumSend hello")
    nvim.wait_for_turns(1)
    assert "offline demo model" in nvim.chat_text()
    assert "✗ error" not in nvim.chat_text()
