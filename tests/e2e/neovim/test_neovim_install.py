"""The plugin installed the way plugin managers install it: its build step and its health.

A plugin manager clones the repository into a directory and puts that directory on the
runtimepath (lazy.nvim), or clones it under ``pack/*/start`` (packer, vim.pack, by hand).
GitHub is out of reach here, so each test "clones" the current work (its files, as a clone of
it would hold them) into such a directory, starts Neovim as a user's starts (no ``--clean``,
no plugin on the runtimepath), and runs the build step the README documents.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from pynvim.api.common import NvimError

from relavium_lsp import __version__
from tests.e2e.lsp_harness import make_git_workspace
from tests.e2e.neovim.install_helpers import (
    SYSTEM_PATH,
    TOOL_ENV,
    clone_plugin,
    offline_turn_works,
    path_with,
    workspace_server,
)
from tests.e2e.neovim.nvim_harness import Neovim, editor_env, neovim, nvim_executable


def checkhealth(nvim: Neovim) -> str:
    """The text `:checkhealth relavium` shows."""
    nvim.api.command("checkhealth relavium")
    return "\n".join(nvim.api.current.buffer[:])


def test_a_pack_start_clone_installs_its_server_and_is_healthy(
    tmp_path: Path, nvim_version: str
) -> None:
    # One route per Neovim: 0.7 has no uv or pipx on its PATH, so the build step makes a
    # private virtualenv with the system's Python; 0.11 finds uv and runs `uv tool install`.
    method = "venv" if nvim_version == "0.7" else "uv"
    path = SYSTEM_PATH if method == "venv" else path_with(tmp_path, "uv")
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    data = home / "xdg-data" / "nvim"
    clone_plugin(data / "site" / "pack" / "relavium" / "start" / "relavium-lsp")
    # The README's command, as written: a headless Neovim that installs the server and quits.
    installing = subprocess.run(
        [nvim_executable(), "--headless", "+RelaviumInstall", "+qa"],
        cwd=workspace,
        env=editor_env(home, path, TOOL_ENV),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert installing.returncode == 0, installing.stderr
    assert "installed relavium-lsp" in installing.stdout + installing.stderr
    record = json.loads((data / "relavium" / "server.json").read_text(encoding="utf-8"))
    assert (record["method"], record["version"]) == (method, __version__)
    installed = Path(record["command"])
    if method == "venv":
        assert installed == data / "relavium" / "venv" / "bin" / "relavium-lsp"
    assert installed.is_relative_to(home)  # the user's own directories, not the workspace

    with neovim(workspace, home, path=path, env=TOOL_ENV, packages=True) as nvim:
        health = checkhealth(nvim)
        assert "ERROR" not in health and "WARNING" not in health, health
        assert f"{installed} serve (installed by :RelaviumInstall)" in health
        assert f"version {__version__}, the plugin's" in health
        for doctor_check in ("Packages: relavium-lsp", "Keychain:", "History database:"):
            assert doctor_check in health
        assert "git version" in health

        nvim.api.command("RelaviumInstall")  # again: the upgrade of an installed server
        assert "installed relavium-lsp" in nvim.messages()
        assert record == json.loads((data / "relavium" / "server.json").read_text("utf-8"))
        offline_turn_works(nvim)
        assert nvim.lua("return require('relavium.client').get().config.cmd") == [
            str(installed),
            "serve",
        ]


def test_without_uv_the_build_step_installs_with_pipx(tmp_path: Path) -> None:
    # The route of a user who has pipx but not uv: pipx's own directories under their home.
    home = tmp_path / "home"
    data = home / "xdg-data" / "nvim"
    clone_plugin(data / "site" / "pack" / "relavium" / "start" / "relavium-lsp")
    installing = subprocess.run(
        [nvim_executable(), "--headless", "+RelaviumInstall", "+qa"],
        cwd=make_git_workspace(tmp_path / "repo"),
        env=editor_env(home, path_with(tmp_path, "pipx"), TOOL_ENV),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert installing.returncode == 0, installing.stderr
    record = json.loads((data / "relavium" / "server.json").read_text(encoding="utf-8"))
    assert (record["method"], record["version"]) == ("pipx", __version__)
    installed = Path(record["command"])
    assert installed.is_relative_to(home) and installed.parent != data / "relavium" / "venv" / "bin"
    reported = subprocess.run(
        [str(installed), "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert __version__ in reported


def test_checkhealth_says_what_to_do_without_a_server(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    clone_plugin(home / "xdg-data" / "nvim" / "site" / "pack" / "relavium" / "start" / "rl")
    with neovim(workspace, home, path=SYSTEM_PATH, packages=True) as nvim:
        health = checkhealth(nvim)
        assert "relavium-lsp not found: run :RelaviumInstall" in health
        assert "ERROR" in health
        with pytest.raises(NvimError, match="relavium-lsp not found: run :RelaviumInstall"):
            nvim.api.command("RelaviumChat")


def test_a_workspace_virtualenv_runs_only_once_trusted(tmp_path: Path, nvim_version: str) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    launcher = workspace_server(workspace)
    with neovim(workspace, tmp_path / "home", path=SYSTEM_PATH) as nvim:
        if nvim_version == "0.7":
            # This Neovim cannot ask whether to trust the folder: only the user's own option
            with pytest.raises(NvimError, match="set workspace_venv = true in setup"):
                nvim.api.command("RelaviumChat")
            nvim.lua("require('relavium').setup({ workspace_venv = true })")
        else:
            nvim.lua("vim.secure.trust({ action = 'deny', path = ... })", str(launcher))
            with pytest.raises(NvimError, match="relavium-lsp is not used: it is not trusted"):
                nvim.api.command("RelaviumChat")
            # `:trust` on the file (what the prompt's "allow" records)
            nvim.lua(
                "vim.cmd('edit ' .. ...) vim.secure.trust({ action = 'allow', bufnr = 0 })"
                " vim.cmd('bwipeout')",
                str(launcher),
            )
        offline_turn_works(nvim)
        assert nvim.lua("return require('relavium.client').get().config.cmd") == [
            str(launcher),
            "serve",
        ]
