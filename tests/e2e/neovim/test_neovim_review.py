""":RelaviumChanges in a real Neovim (issue 37): a turn's files in the quickfix list, each
file's diff against the turn's checkpoint, keep one, undo another."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.e2e.neovim.nvim_harness import Neovim, neovim
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

APP_BEFORE = ["def add(a, b):", "    return a - b", "", "", "print(add(2, 3))"]
APP_AFTER = ["def add(a, b):", "    return a + b", "", "", "print(add(2, 3))"]
NOTES_BEFORE = ["# Notes", "", "nothing yet"]
NOTES_AFTER = ["# Notes", "", "add() adds now", "and is tested"]
MINUS = "\N{MINUS SIGN}"  # the chat and the list write counts as "+3 \N{MINUS SIGN}2"


def edit(call_id: str, path: str, old: str, new: str) -> ScriptedToolCall:
    arguments = json.dumps({"path": path, "edits": [{"old": old, "new": new}]})
    return ScriptedToolCall(id=call_id, name="edit_file", arguments=arguments)


def press(nvim: Neovim, keys: str) -> None:
    """Type ``keys`` in the current window (mappings apply), and run them now."""
    nvim.lua(
        "vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(..., true, false, true),"
        " 'mx', false)",
        keys,
    )


@dataclass
class Quickfix:
    """The quickfix list: its title, and each entry as "<file> <text>"."""

    title: str
    items: list[str]


def quickfix(nvim: Neovim) -> Quickfix:
    return Quickfix(
        **nvim.lua(
            "local list = vim.fn.getqflist({ title = 0, items = 0 })"
            " local texts = {} for _, item in ipairs(list.items) do"
            " table.insert(texts, vim.api.nvim_buf_get_name(item.bufnr) .. ' ' .. item.text) end"
            " return { title = list.title, items = texts }"
        )
    )


def test_changes_lists_the_turns_files_shows_diffs_and_keeps_or_undoes_each(
    tmp_path: Path,
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    (workspace / "NOTES.md").write_text("\n".join(NOTES_BEFORE) + "\n", encoding="utf-8")
    home = tmp_path / "home"
    app, notes = workspace / "app.py", workspace / "NOTES.md"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(
                tool_calls=[
                    edit("c1", "app.py", "a - b", "a + b"),
                    edit("c2", "NOTES.md", "nothing yet", "add() adds now\nand is tested"),
                ]
            ),
            openai_stream(text=["Fixed and noted."]),
        )
        with neovim(workspace, home) as nvim:
            nvim.api.command("edit app.py")
            nvim.setup(agent="coder", approval="never_ask")
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend Fix add and note it.")
            nvim.wait_until(
                "T.chat_text():find('files changed', 1, true)", "the turn's change summary"
            )
            assert (
                f"  2 files changed +3 {MINUS}2 · :RelaviumChanges to review, keep or undo"
                in nvim.chat_lines()
            )
            assert nvim.buffer_lines(app) == APP_AFTER
            assert nvim.buffer_lines(notes) == NOTES_AFTER

            nvim.api.command("RelaviumChanges")
            nvim.wait_until("vim.bo.buftype == 'quickfix'", "the quickfix window")
            listed = quickfix(nvim)
            assert listed.title == f"Relavium: 2 files changed +3 {MINUS}2 · the turn of message 1"
            assert sorted(listed.items) == [
                f"{notes} +2 {MINUS}1 · pending",
                f"{app} +1 {MINUS}1 · pending",
            ]
            row = {text.split(" ")[0]: index + 1 for index, text in enumerate(listed.items)}

            # <CR>: the file's diff against what it held before the turn, in a review tab
            nvim.api.command(f"{row[str(app)]}")
            press(nvim, "<CR>")
            nvim.wait_until("#vim.api.nvim_list_tabpages() == 2", "the review tab")
            tab = nvim.lua(
                """
                local shown = {}
                for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
                  local buf = vim.api.nvim_win_get_buf(win)
                  table.insert(shown, { name = vim.api.nvim_buf_get_name(buf),
                    diff = vim.wo[win].diff, buftype = vim.bo[buf].buftype,
                    lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false) })
                end
                return { shown = shown, current = vim.api.nvim_buf_get_name(0) }
                """
            )
            by_name = {entry["name"]: entry for entry in tab["shown"]}
            checkpoint = by_name["relavium://checkpoint/1/app.py"]
            assert checkpoint["diff"] is True and checkpoint["lines"] == APP_BEFORE
            assert by_name[str(app)]["diff"] is True and by_name[str(app)]["lines"] == APP_AFTER
            assert any(entry["buftype"] == "quickfix" for entry in tab["shown"])
            assert tab["current"] == str(app)
            assert nvim.lua("return vim.fn.line('.')") == 2  # at the first change

            # `a` in the checkpoint keeps app.py; `u` in the list undoes NOTES.md
            nvim.lua("vim.cmd('wincmd h')")
            assert nvim.lua("return vim.api.nvim_buf_get_name(0)").startswith("relavium://")
            press(nvim, "a")
            nvim.wait_until("T.chat_text():find('✓ kept: app.py', 1, true)", "the keep")
            nvim.lua("vim.cmd('copen')")
            nvim.api.command(f"{row[str(notes)]}")
            press(nvim, "u")
            nvim.wait_until("T.chat_text():find('⟲ undone: NOTES.md', 1, true)", "the undo")
            nvim.wait_until(
                f"vim.fn.getqflist({{ items = 0 }}).items[{row[str(notes)]}].text"
                ":find('undone', 1, true)",
                "the refreshed list",
            )
            assert sorted(quickfix(nvim).items) == [
                f"{notes} +0 {MINUS}0 · undone",
                f"{app} +1 {MINUS}1 · kept",
            ]
            assert nvim.buffer_lines(app) == APP_AFTER
            assert nvim.buffer_lines(notes) == NOTES_BEFORE
            # the undo is one undo step of the buffer: `u` brings the agent's text back
            nvim.lua(
                "vim.api.nvim_buf_call(vim.fn.bufnr(...), function() vim.cmd('undo') end)",
                str(notes),
            )
            assert nvim.buffer_lines(notes) == NOTES_AFTER

            # the review keys act only on a Relavium list: on another list <CR> jumps as usual
            nvim.api.command("cexpr ['" + str(app) + ":5:print']")
            nvim.lua("vim.cmd('copen')")
            press(nvim, "<CR>")
            assert nvim.lua("return { vim.api.nvim_buf_get_name(0), vim.fn.line('.') }") == [
                str(app),
                5,
            ]
