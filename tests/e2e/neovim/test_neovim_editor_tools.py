"""editor_diagnostics answered by Neovim itself: a test-only diagnostic reaches the model."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.e2e.neovim.nvim_harness import neovim
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

SET_DIAGNOSTIC = """
local path = ...
vim.cmd('edit ' .. vim.fn.fnameescape(path))
local ns = vim.api.nvim_create_namespace('relavium-test-lint')
vim.diagnostic.set(ns, vim.api.nvim_get_current_buf(), {
  { lnum = 1, col = 11, message = 'suspicious minus', source = 'test-lint',
    severity = vim.diagnostic.severity.WARN },
})
"""


def test_editor_diagnostics_are_answered_from_vim_diagnostic(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        agent = workspace / ".relavium" / "agents" / "coder.agent.yaml"
        agent.write_text(agent.read_text().replace("tools: [", "tools: [editor_diagnostics, "))
        model.script(
            openai_stream(
                tool_calls=[
                    ScriptedToolCall(
                        id="call-d",
                        name="editor_diagnostics",
                        arguments=json.dumps({"path": "app.py"}),
                    )
                ]
            ),
            openai_stream(text=["One warning."]),
        )
        with neovim(workspace, home) as nvim:
            nvim.setup(agent="coder")
            nvim.lua(SET_DIAGNOSTIC, str(workspace / "app.py"))
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend any problems in app.py?")
            nvim.wait_for_turns(1)
            assert "One warning." in nvim.chat_text()
    offered = {tool["function"]["name"] for tool in model.requests[0].json()["tools"]}
    assert "editor_diagnostics" in offered  # declared: this client answers it
    tool_message = model.requests[1].json()["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"] == "app.py:2:12: warning: suspicious minus [test-lint]"
