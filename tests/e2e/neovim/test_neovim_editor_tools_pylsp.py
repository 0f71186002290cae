"""editor_definition / editor_references answered by a real second language server (pylsp).

Neovim has python-lsp-server attached to the Python files beside relavium; the scripted
model asks where a function used in one file is defined and where it is referenced, and the
tool results carry the locations pylsp (jedi) found across both files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.e2e.neovim.nvim_harness import Neovim, neovim
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

HELPERS = "def shout(text):\n    return text.upper()\n"
# `shout` is imported on line 1 (column 21) and called on line 4 (column 7).
MAIN = 'from helpers import shout\n\n\nprint(shout("hi"))\n'

# Starts pylsp (0.7 has no vim.lsp.start) and attaches it to both files' buffers.
START_PYLSP = """
local cmd, root, paths = ...
local id = vim.lsp.start_client({ name = 'pylsp', cmd = cmd, root_dir = root })
assert(id, 'pylsp did not start')
for _, path in ipairs(paths) do
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  assert(vim.lsp.buf_attach_client(vim.api.nvim_get_current_buf(), id))
end
_G.T.pylsp = id
"""
PYLSP_READY = (
    "vim.lsp.get_client_by_id(T.pylsp) ~= nil"
    " and vim.lsp.get_client_by_id(T.pylsp).initialized == true"
)


# One answered request before the tools ask: jedi loads lazily, and the editor's own
# per-request timeout must not race that on a loaded machine.
WARM_UP = """
local path = ...
local answers = vim.lsp.buf_request_sync(vim.fn.bufnr(path), 'textDocument/documentSymbol',
  { textDocument = { uri = vim.uri_from_fname(path) } }, 60000)
local answer = answers and answers[T.pylsp]
return answer ~= nil and answer.result ~= nil
"""


def start_pylsp(nvim: Neovim, workspace: Path, *files: Path) -> None:
    """pylsp from this interpreter's environment, attached to ``files``, warmed up."""
    command = [sys.executable, "-m", "pylsp"]
    nvim.lua(START_PYLSP, command, str(workspace), [str(path) for path in files])
    nvim.wait_until(PYLSP_READY, "pylsp to initialize")
    assert nvim.lua(WARM_UP, str(files[-1])), "pylsp did not answer documentSymbol"


def test_definition_and_references_come_from_a_real_python_language_server(
    tmp_path: Path,
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    (workspace / "helpers.py").write_text(HELPERS, encoding="utf-8")
    (workspace / "main.py").write_text(MAIN, encoding="utf-8")
    home = tmp_path / "home"
    position = {"path": "main.py", "line": 4, "character": 7}
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        agent = workspace / ".relavium" / "agents" / "coder.agent.yaml"
        agent.write_text(
            agent.read_text().replace("tools: [", "tools: [editor_definition, editor_references, ")
        )
        model.script(
            openai_stream(
                tool_calls=[
                    ScriptedToolCall(
                        id="call-def", name="editor_definition", arguments=json.dumps(position)
                    ),
                    ScriptedToolCall(
                        id="call-refs", name="editor_references", arguments=json.dumps(position)
                    ),
                ]
            ),
            openai_stream(text=["Defined in helpers.py."]),
        )
        with neovim(workspace, home) as nvim:
            nvim.setup(agent="coder")
            start_pylsp(nvim, workspace, workspace / "helpers.py", workspace / "main.py")
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend where is shout defined and used?")
            nvim.wait_for_turns(1)
            assert "Defined in helpers.py." in nvim.chat_text()
    offered = {tool["function"]["name"] for tool in model.requests[0].json()["tools"]}
    assert {"editor_definition", "editor_references"} <= offered
    results = {
        message["tool_call_id"]: message["content"]
        for message in model.requests[1].json()["messages"]
        if message["role"] == "tool"
    }
    assert results["call-def"] == "helpers.py:1:5"
    assert sorted(results["call-refs"].splitlines()) == [
        "helpers.py:1:5",
        "main.py:1:21",
        "main.py:4:7",
    ]
