"""Neovim's chat in a real terminal (issue 37): Markdown highlighting, folded tool cards, and
the screenshot in docs/screenshots/ that shows them.

Neovim runs with its own terminal UI inside tmux; a real agent turn (a read, an approved
edit, an answer with Markdown) streams into the chat; the screen tmux holds is drawn as
``docs/screenshots/neovim-chat-nvim<version>.png``.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.e2e.neovim.nvim_harness import REPO, neovim
from tests.e2e.neovim.terminal_image import cells, render
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

SCREEN = (140, 40)
SCREENSHOTS = REPO / "docs" / "screenshots"
ANSWER = [
    "Found it: `add` **subtracted** its arguments. ",
    "Now it adds them:\n\n",
    "```python\ndef add(a, b):\n    return a + b\n```\n\n",
    "- `print(add(2, 3))` prints `5`\n",
    "- nothing else calls `add`\n",
]


def rgb(colour: int) -> tuple[int, int, int]:
    return ((colour >> 16) & 255, (colour >> 8) & 255, colour & 255)


def call(call_id: str, name: str, arguments: dict[str, object]) -> object:
    return openai_stream(
        tool_calls=[ScriptedToolCall(id=call_id, name=name, arguments=json.dumps(arguments))]
    )


def test_the_chat_in_a_terminal_is_highlighted_folded_and_photographed(
    tmp_path: Path, nvim_version: str
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            call("c1", "read_file", {"path": "app.py"}),
            call(
                "c2", "edit_file", {"path": "app.py", "edits": [{"old": "a - b", "new": "a + b"}]}
            ),
            openai_stream(text=ANSWER),
        )
        with neovim(workspace, home, terminal=SCREEN) as nvim:
            assert nvim.terminal is not None
            nvim.api.command("edit app.py")
            nvim.setup(agent="coder", chat_size=84, show_diffs=False)
            nvim.lua("T.select_choice = 1")  # Approve
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend Why does add(2, 3) print -1? Fix it.")
            nvim.wait_until("T.chat_text():find('file changed', 1, true)", "the turn's summary")
            nvim.api.command("redraw")

            chat = nvim.lua(
                """
                local buf = T.chat().buffer.bufnr
                local win = vim.fn.win_findbuf(buf)[1]
                local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
                local function find(prefix)
                  for i, line in ipairs(lines) do
                    if line:sub(1, #prefix) == prefix then return i end
                  end
                end
                local card, code = find('▸ read_file'), find('Found it')
                local result = { syntax = vim.bo[buf].syntax, treesitter = false }
                vim.api.nvim_win_call(win, function()
                  result.card_folded = vim.fn.foldclosed(card) == card
                  result.card_syntax = vim.fn.synIDattr(vim.fn.synID(card, 1, 1), 'name')
                  result.code_syntax = vim.fn.synIDattr(vim.fn.synID(code, 12, 1), 'name')
                end)
                local highlighter = vim.treesitter.highlighter
                if highlighter and highlighter.active[buf] then
                  result.treesitter = true
                  local captures = vim.treesitter.get_captures_at_pos(buf, code - 1, 11)
                  result.captures = {}
                  for _, capture in ipairs(captures) do
                    table.insert(result.captures, capture.capture)
                  end
                end
                return result
                """
            )
            assert chat["syntax"] == "relavium"
            assert chat["card_folded"] is True
            assert chat["card_syntax"] == "relaviumToolCall"
            if nvim_version == "0.11":
                # the markdown parser ships with 0.11: `add` is inline code to treesitter
                assert chat["treesitter"] is True
                assert any(name.startswith("markup.raw") for name in chat["captures"])
            else:
                assert chat["treesitter"] is False
                assert chat["code_syntax"] == "markdownCode"  # Vim's Markdown syntax

            screen = nvim.terminal.capture()
            text = "\n".join("".join(char for char, _ in cells(row)) for row in screen.split("\n"))
            assert "## You" in text and "▸ read_file app.py" in text
            assert "1 file changed +1 \N{MINUS SIGN}1" in text
            assert "\x1b[38;2;" in screen  # the terminal holds real (24-bit) colours
            # the terminal's default colours: the colour scheme's Normal ones, when it has some
            normal = nvim.lua(
                "local hl = vim.api.nvim_get_hl and vim.api.nvim_get_hl(0, { name = 'Normal' })"
                " or vim.api.nvim_get_hl_by_name('Normal', true)"
                " return { fg = hl.fg or hl.foreground, bg = hl.bg or hl.background }"
            )
            theme = {
                f"default_{'foreground' if key == 'fg' else 'background'}": rgb(value)
                for key, value in (normal or {}).items()  # none at all: an empty Lua table, []
            }
            image = render(screen, *SCREEN, **theme)
            assert len(image.getcolors(1 << 24) or []) > 8  # several colours, not a blank frame
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            image.save(SCREENSHOTS / f"neovim-chat-nvim{nvim_version}.png", optimize=True)
