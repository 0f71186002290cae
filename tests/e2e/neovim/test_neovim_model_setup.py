"""`:RelaviumSetup` in a real Neovim against a real server and a loopback model server.

The pickers are answered the way a picker plugin would (``vim.ui.select`` / ``vim.ui.input``
replaced by the test) and the hidden prompt by ``vim.fn.inputsecret``'s stand-in. The key goes
to the keyring the user chose (keyrings.alt's file backend, set explicitly) and is never shown.
"""

from __future__ import annotations

import json
from pathlib import Path

from relavium_lsp.testing.loopback import LoopbackServer, ReceivedRequest, ScriptedResponse
from tests.e2e.lsp_harness import make_git_workspace
from tests.e2e.neovim.nvim_harness import neovim

API_KEY = "sk-nvim-setup-0123456789abcdef0123456789"

ANSWERS = """
local answers = ...
vim.ui.select = function(items, opts, on_choice)
  local wanted = answers[opts.kind]
  for _, item in ipairs(items) do
    local text = opts.format_item and opts.format_item(item) or item
    if text:find(wanted, 1, true) then
      return on_choice(item)
    end
  end
  error('no choice matches ' .. wanted)
end
vim.ui.input = function(opts, on_confirm)
  T.prompts = T.prompts or {}
  table.insert(T.prompts, opts.prompt .. '|' .. (opts.default or ''))
  on_confirm(answers[opts.prompt])
end
vim.fn.inputsecret = function(prompt)
  T.secret_prompt = prompt
  return answers.secret
end
"""


def model_server() -> LoopbackServer:
    def respond(request: ReceivedRequest) -> ScriptedResponse:
        if request.headers.get("authorization") != f"Bearer {API_KEY}":
            return ScriptedResponse(status=401, body=b'{"error": {"message": "bad key"}}')
        body = json.dumps({"data": [{"id": "coder-7b", "object": "model"}]}).encode()
        return ScriptedResponse(headers={"content-type": "application/json"}, body=body)

    return LoopbackServer(responder=respond)


def test_setup_picks_a_local_server_stores_the_key_and_reports_the_check(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    keyring_env = {"PYTHON_KEYRING_BACKEND": "keyrings.alt.file.PlaintextKeyring"}
    with model_server() as server, neovim(workspace, home, env=keyring_env) as nvim:
        nvim.setup()
        answers = {
            "relavium_setup_provider": "(localai)",
            "Model of LocalAI: ": "coder-7b",
            "Where LocalAI listens: ": f"{server.url}/v1",
            "secret": API_KEY,
        }
        nvim.lua(ANSWERS, answers)
        nvim.lua("require('relavium').setup_model(function(err, result) T.setup = result end)")
        nvim.wait_until("T.setup ~= nil", "the setup to answer")
        result = nvim.lua("return T.setup")
        prompts = nvim.lua("return T.prompts")
        secret_prompt = nvim.lua("return T.secret_prompt")
        messages = nvim.messages()
    assert result["defaultModel"] == "localai/coder-7b"
    assert result["keyStored"] == "file"
    assert result["check"]["ok"], result["check"]
    assert prompts == ["Model of LocalAI: |", "Where LocalAI listens: |http://127.0.0.1:8080/v1"]
    assert "only if your server wants one" in secret_prompt
    assert "new chats use localai/coder-7b" in messages and "✓" in messages
    config = (home / ".relavium" / "config.toml").read_text(encoding="utf-8")
    assert 'default_model = "localai/coder-7b"' in config
    log = (home / ".relavium" / "logs" / "relavium-lsp.log").read_text(encoding="utf-8")
    for where, text in {"messages": messages, "config": config, "log": log}.items():
        assert API_KEY not in text, where
