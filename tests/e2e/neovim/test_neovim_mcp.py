"""MCP tool calls in the Neovim chat buffer: ordinary tool blocks, approvals included."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.e2e.neovim.nvim_harness import neovim
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream
from tests.unit.mcp.mcp_harness import probe_table


def test_an_mcp_call_is_an_ordinary_tool_block(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        agent = workspace / ".relavium" / "agents" / "coder.agent.yaml"
        agent.write_text(
            agent.read_text(encoding="utf-8").replace("tools: [", 'tools: ["mcp:probe", '),
            encoding="utf-8",
        )
        with (home / ".relavium" / "config.toml").open("a", encoding="utf-8") as config:
            config.write("\n" + probe_table())
        call = ScriptedToolCall(
            id="call-1", name="mcp__probe__echo", arguments=json.dumps({"text": "hi there"})
        )
        model.script(openai_stream(tool_calls=[call]), openai_stream(text=["It said hi."]))
        with neovim(workspace, home) as nvim:
            nvim.setup(agent="coder")
            nvim.lua("T.select_choice = 1")  # Approve
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend Say hi through the probe.")
            nvim.wait_for_turns(1)
            [asked] = nvim.lua("return T.selects")
            assert asked["prompt"] == (
                "Relavium wants to run mcp__probe__echo (process): MCP probe: echo"
            )
            text = nvim.chat_text()
            assert "▸ mcp__probe__echo" in text
            assert "? approval: mcp__probe__echo (process) MCP probe: echo" in text
            assert "◂ mcp__probe__echo ✓" in text
            assert "It said hi." in text
