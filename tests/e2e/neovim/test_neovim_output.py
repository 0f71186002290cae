"""`:RelaviumOutput`: the agent's command output (`agent:tool_output`) in a scratch buffer."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.e2e.neovim.nvim_harness import neovim
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

SCRIPT = "echo live-one; echo live-two"

BUFFER_STATE = """
local bufnr = ...
return {
  name = vim.api.nvim_buf_get_name(bufnr),
  buftype = vim.api.nvim_buf_get_option(bufnr, 'buftype'),
  current = vim.api.nvim_get_current_buf() == bufnr,
  lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false),
  cursor = vim.api.nvim_win_get_cursor(0)[1],
}
"""

# A command still running: its pieces arrive one by one, split anywhere.
FEED = """
local call_id, text = ...
require('relavium.output').on_event({ type = 'agent:tool_output', toolId = 'run_command',
  callId = call_id, text = text })
"""


def test_command_output_streams_into_a_scratch_buffer(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    arguments = json.dumps({"command": ["sh", "-c", SCRIPT]})
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        agent = workspace / ".relavium" / "agents" / "coder.agent.yaml"
        agent.write_text(agent.read_text().replace("tools: [", "tools: [run_command, "))
        config = home / ".relavium" / "config.toml"  # the user's own allowlist
        config.write_text(
            config.read_text() + f"\n[chat]\nallowed_commands = [\"sh -c '{SCRIPT}'\"]\n"
        )
        model.script(
            openai_stream(
                tool_calls=[ScriptedToolCall(id="call-r", name="run_command", arguments=arguments)]
            ),
            openai_stream(text=["Ran it."]),
        )
        with neovim(workspace, home) as nvim:
            nvim.setup(agent="coder")
            assert nvim.lua("return require('relavium').output()") is None  # nothing ran yet
            nvim.lua("T.select_choice = 1")  # approve the (allow-listed) command
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend run it")
            nvim.wait_for_turns(1)
            assert "Ran it." in nvim.chat_text()

            nvim.api.command("RelaviumOutput")
            bufnr = nvim.lua("return vim.api.nvim_get_current_buf()")
            state = nvim.lua(BUFFER_STATE, bufnr)
            assert state["name"].endswith("relavium://output/call-r")
            assert state["buftype"] == "nofile"
            assert state["lines"] == ["live-one", "live-two", "── done ──"]

            # A running command's buffer, opened early, grows and follows its end.
            nvim.lua(FEED, "call-live", "step 1\nste")
            live = nvim.lua("return require('relavium').output()")
            assert nvim.lua(BUFFER_STATE, live)["lines"] == ["step 1", "ste"]
            nvim.lua(FEED, "call-live", "p 2\nstep 3\n")
            state = nvim.lua(BUFFER_STATE, live)
            assert state["current"]
            assert state["lines"] == ["step 1", "step 2", "step 3", ""]
            assert state["cursor"] == 4
            # The earlier call's buffer is still there by id.
            assert nvim.lua("return require('relavium').output('call-r')") == bufnr
