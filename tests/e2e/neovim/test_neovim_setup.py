"""Plugin setup in a real Neovim: commands, options, the default server command, help tags."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pynvim.api.common import NvimError

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.e2e.neovim.install_helpers import workspace_server
from tests.e2e.neovim.nvim_harness import PLUGIN_DIR, neovim
from tests.unit.llm.wire_servers import LoopbackServer

COMMANDS = [
    "RelaviumChat",
    "RelaviumSend",
    "RelaviumAsk",
    "RelaviumAbort",
    "RelaviumOutput",
    "RelaviumMemory",
    "RelaviumSessions",
    "RelaviumSessionList",
    "RelaviumResume",
    "RelaviumExport",
    "RelaviumChanges",
]


def test_a_chosen_workspace_virtualenv_runs_and_init_options_arrive(
    tmp_path: Path,
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    launcher = workspace_server(workspace)
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        # relavium-lsp is not on this PATH, so the workspace's virtualenv is the default
        # (here the user opted in; test_neovim_install covers the trust question)
        with neovim(workspace, home, path="/usr/bin:/bin") as nvim:
            nvim.lua("require('relavium').setup({ agent = 'coder', workspace_venv = true })")
            nvim.wait_until("require('relavium.client').is_ready()", "the server to initialize")
            client = nvim.lua(
                "local c = require('relavium.client').get()"
                " return { cmd = c.config.cmd, root = c.config.root_dir,"
                " options = c.config.init_options }"
            )
            assert client["cmd"] == [str(launcher), "serve"]
            assert client["root"] == str(workspace)
            assert client["options"] == {"clientName": "neovim", "defaultAgent": "coder"}
            # a session started without an agent gets the default from initializationOptions,
            # and is recorded as opened by Neovim (clientName)
            started = nvim.lua(
                """
                local client = require('relavium.client')
                local started, resumed
                client.request('relavium/startSession', vim.empty_dict(), function(_, result)
                  started = result
                  client.request('relavium/resumeSession', { sessionId = result.sessionId },
                    function(_, again) resumed = again end)
                end)
                vim.wait(10000, function() return resumed ~= nil end, 10)
                return { agent = started.agentRef, source = resumed.session.source }
                """
            )
            assert started == {
                "agent": "coder",
                "source": {"kind": "neovim", "interactive": True, "platform": "Neovim"},
            }


def test_commands_exist_and_bad_options_are_refused(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    with neovim(workspace, tmp_path / "home") as nvim:
        for command in COMMANDS:
            assert nvim.lua("return vim.fn.exists(':' .. ...)", command) == 2, command
        with pytest.raises(NvimError, match='unknown option "agnet"'):
            nvim.lua("require('relavium').setup({ agnet = 'coder' })")
        with pytest.raises(NvimError, match="approval"):
            nvim.lua("require('relavium').setup({ approval = 'sometimes' })")
        # nothing was started by the refused setups
        assert nvim.lua("return require('relavium.client').get() == nil") is True


def test_help_file_builds_tags_and_opens(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    runtime = tmp_path / "runtime"
    shutil.copytree(PLUGIN_DIR / "doc", runtime / "doc")
    with neovim(workspace, tmp_path / "home") as nvim:
        # :helptags fails loudly (E154 duplicate tag, E670 mixed encodings, …) on a bad file
        nvim.api.command(f"helptags {runtime / 'doc'}")
        tags = (runtime / "doc" / "tags").read_text(encoding="utf-8").splitlines()
        names = {line.split("\t")[0] for line in tags}
        expected = {"relavium.txt", "relavium-setup", "relavium.setup()", "relavium-chat"}
        expected |= {f":{command}" for command in COMMANDS}
        assert expected <= names
        nvim.api.command(f"set rtp+={runtime}")
        nvim.api.command("help :RelaviumAsk")
        opened = nvim.lua("return { vim.fn.expand('%:t'), vim.bo.filetype }")
        assert opened == ["relavium.txt", "help"]


def test_a_server_that_dies_at_startup_is_reported_in_the_chat(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    with neovim(workspace, tmp_path / "home") as nvim:
        nvim.lua("require('relavium').setup({ cmd = { 'false' } })")
        nvim.api.command("RelaviumChat")
        nvim.wait_until(
            "T.chat_text():find('✗ error [server_unavailable]', 1, true) ~= nil",
            "the startup failure in the chat",
        )
        assert "the relavium server exited before it was ready" in nvim.chat_text()


def test_a_chat_at_home_asks_once_and_the_option_allows_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    question = (
        "return vim.tbl_filter(function(s) return s.kind == 'relavium_broad_working_dir' end,"
        " T.selects)"
    )
    # Neovim opened in the home directory: the server refuses the session until the user says so.
    with neovim(home, home) as nvim:
        nvim.setup()
        nvim.api.command("RelaviumChat")  # the picker is dismissed: no session
        nvim.wait_until("T.chat_text():find('no session started', 1, true)", "the refusal")
        assert nvim.lua("return T.chat().session_id") is None
        asked = nvim.lua(question)
        assert len(asked) == 1 and str(home) in asked[0]["prompt"], asked
        nvim.lua("T.select_choice = 1")  # "Allow it for this Neovim"
        nvim.api.command("RelaviumChat")
        nvim.wait_until("T.chat() and T.chat().session_id ~= nil", "the allowed session")
        first = nvim.session_id()
        nvim.api.command("RelaviumChat")  # the same directory is not asked about again
        nvim.wait_until(
            f"T.chat() and T.chat().session_id and T.chat().session_id ~= '{first}'",
            "the second session",
        )
        assert len(nvim.lua(question)) == 2
    with neovim(home, home) as nvim:
        nvim.setup(allow_broad_working_dir=True)
        nvim.api.command("RelaviumChat")
        nvim.wait_until("T.chat() and T.chat().session_id ~= nil", "the session the option allows")
        assert nvim.lua(question) == []
