"""The Neovim chat's richer UI over the real server: agent/model choice, the composer's
completion and attachments, slash commands, retry/edit of the last message, code yank."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.e2e.neovim.nvim_harness import neovim
from tests.unit.llm.wire_servers import LoopbackServer, openai_stream

CODE_ANSWER = ["Here:\n\n```python\n", "print('hi')\n", "```\n"]


def _reviewer(workspace: Path) -> None:
    (workspace / ".relavium" / "agents" / "reviewer.agent.yaml").write_text(
        "id: reviewer\nname: Reviewer\ndescription: reviews\nmodel: gpt-4.1\nprovider: loop\n"
        'system_prompt: "Review."\ntools: []\n',
        encoding="utf-8",
    )


def _user_text(request_json: dict[str, Any]) -> str:
    """The text of the last user message of a chat-completions request (parts joined)."""
    user = [m for m in request_json["messages"] if m["role"] == "user"][-1]
    content = user["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part.get("type") == "text")


def test_model_choice_composer_attachments_yank_retry_and_edit(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        _reviewer(workspace)
        model.script(
            openai_stream(text=["One."]),
            openai_stream(text=CODE_ANSWER),
            openai_stream(text=["Again."]),
            openai_stream(text=["Edited."]),
        )
        with neovim(workspace, home) as nvim:
            nvim.api.command("edit app.py")
            nvim.setup()
            nvim.api.command("RelaviumChat agent=coder model=gpt-4.1")
            nvim.wait_until("T.chat() and T.chat().model == 'gpt-4.1'", "the model switch")
            assert "── model → gpt-4.1 (from the next turn) ──" in nvim.chat_text()

            # The composer: completion of files, mentions and slash commands.
            composer = nvim.lua("return require('relavium.compose').open(T.chat())")
            completions = nvim.lua(
                "local c = require('relavium.compose') local out = {} "
                "for _, base in ipairs({'@ap', '#se', '/co'}) do "
                "  out[base] = vim.tbl_map(function(i) return i.word end, c.candidates(base)) "
                "end "
                "vim.api.nvim_buf_set_lines(0, 0, -1, false, {'Explain @ap'}) "
                "vim.api.nvim_win_set_cursor(0, {1, 11}) "
                "out.start = relavium_compose_complete(1, '') "
                "out.func = vim.bo.completefunc "
                "return out"
            )
            assert completions["@ap"] == ["@app.py"]
            assert completions["#se"] == ["#selection"]
            assert completions["/co"] == ["/compact"]
            assert completions["start"] == 8  # 0-based column of the '@'
            assert completions["func"] == "v:lua.relavium_compose_complete"
            nvim.lua(
                "vim.api.nvim_buf_set_lines(..., 0, -1, false, {'Explain @app.py'}) "
                "require('relavium.compose').submit(...)",
                composer,
            )
            nvim.wait_for_turns(1)
            assert "📎 attached: app.py" in nvim.chat_text()
            first = model.requests[0].json()
            assert first["model"] == "gpt-4.1"
            text = _user_text(first)
            assert text.startswith("Explain @app.py")
            assert "\nAttached file: app.py\n```py\ndef add(a, b):" in text
            # The settled turn names the model that answered.
            completed = [line for line in nvim.chat_lines() if line.startswith("── stop")]
            assert completed[-1].endswith("· gpt-4.1 ──")

            nvim.api.command("RelaviumSend Show code")
            nvim.wait_for_turns(2)
            nvim.api.command("RelaviumYank")
            assert nvim.lua("return vim.fn.getreg('\"')") == "print('hi')\n"

            # The model picker (vim.ui.select), from the next turn on.
            nvim.lua(
                "T.select_choice = function(items) for i, c in ipairs(items) do "
                "if c.model == 'gpt-4o-mini' then return i end end end"
            )
            nvim.api.command("RelaviumModel")
            nvim.wait_until("T.chat().model == 'gpt-4o-mini'", "the picked model")
            original = nvim.session_id()

            # Retry: the last message again, in a fork before it.
            nvim.api.command("RelaviumRetry")
            nvim.wait_until(
                f"T.chat().session_id and T.chat().session_id ~= '{original}'", "the fork"
            )
            nvim.wait_until("T.chat_text():find('Again.', 1, true) ~= nil", "the retried answer")
            nvim.wait_until("not T.chat().busy", "the retried turn to settle")
            fork_text = nvim.chat_text()
            assert "One." in fork_text and "print('hi')" not in fork_text
            assert _user_text(model.requests[2].json()) == "Show code"

            # Edit: the last message back in a composer, in a fork before it.
            forked = nvim.session_id()
            nvim.api.command("RelaviumEdit")
            nvim.wait_until(
                f"T.chat().session_id ~= '{forked}' and vim.bo.filetype == 'relavium_compose'",
                "the composer of the edit",
            )
            assert nvim.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["Show code"]
            nvim.lua(
                "vim.api.nvim_buf_set_lines(0, 0, -1, false, {'Show more code'}) "
                "require('relavium.compose').submit(vim.api.nvim_get_current_buf())"
            )
            nvim.wait_until("T.chat_text():find('Edited.', 1, true) ~= nil", "the edited answer")
            assert _user_text(model.requests[3].json()) == "Show more code"
            sessions = nvim.lua(
                "local out = nil "
                "require('relavium.client').request('relavium/listSessions', {limit = 50}, "
                "  function(_, r) out = #r.sessions end) "
                "vim.wait(10000, function() return out ~= nil end, 10) return out"
            )
            assert sessions == 3  # the first chat and both forks stay listed

            # Slash commands and the agent picker.
            edited = nvim.session_id()
            nvim.lua("require('relavium.compose').run(T.chat(), '/new')")
            nvim.wait_until(
                f"T.chat().session_id and T.chat().session_id ~= '{edited}'", "the /new chat"
            )
            assert nvim.lua("return T.chat().agent") == "coder"
            nvim.lua(
                "T.select_choice = function(items) for i, a in ipairs(items) do "
                "if a.id == 'reviewer' then return i end end end"
            )
            nvim.api.command("RelaviumAgent")
            nvim.wait_until(
                "T.chat().agent == 'reviewer' and T.chat().session_id ~= nil", "the picked agent"
            )
        assert model.unscripted == []
