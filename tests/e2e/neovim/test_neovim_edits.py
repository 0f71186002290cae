"""Agent edits land in Neovim buffers through workspace/applyEdit, behind vim.ui.select."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.e2e.neovim.nvim_harness import neovim
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

ORIGINAL = ["def add(a, b):", "    return a - b", "", "", "print(add(2, 3))"]
FIXED = "def add(a, b):\n    return a + b\n\n\nprint(add(2, 3))\n"
CHOICES = ["Approve", "Reject", "Always allow for this session"]


def write_then_answer(path: str, content: str) -> list[object]:
    return [
        openai_stream(
            tool_calls=[
                ScriptedToolCall(
                    id="call-1",
                    name="write_file",
                    arguments=json.dumps({"path": path, "content": content}),
                )
            ],
            usage=(80, 20),
        ),
        openai_stream(text=["Done."], usage=(120, 2)),
    ]


def tool_result_sent_back(model: LoopbackServer) -> str:
    """The tool message the server sent to the model after the (last) write."""
    messages = model.requests[-1].json()["messages"]
    tool_messages = [m for m in messages if m["role"] == "tool"]
    return str(tool_messages[-1]["content"])


def test_approved_write_changes_the_open_buffer_and_u_undoes_it(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    app = workspace / "app.py"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(*write_then_answer("app.py", FIXED))
        with neovim(workspace, home) as nvim:
            nvim.api.command("edit app.py")
            nvim.setup(agent="coder")
            nvim.lua("T.select_choice = 1")  # Approve
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend Fix add.")
            nvim.wait_for_turns(1)

            selects = nvim.lua("return T.selects")
            assert selects == [
                {
                    "prompt": "Relavium wants to run write_file (fs_write): app.py",
                    "items": CHOICES,
                    "kind": "relavium_approval",
                }
            ]
            # the edit went into the open buffer, not to disk: saving stays the user's act
            assert nvim.buffer_lines(app) == FIXED.splitlines()
            assert nvim.lua("return vim.bo[vim.fn.bufnr(...)].modified", str(app)) is True
            assert app.read_text(encoding="utf-8").splitlines() == ORIGINAL
            assert "Replaced app.py" in tool_result_sent_back(model)
            text = nvim.chat_text()
            assert "? approval: write_file (fs_write) app.py" in text
            assert "  → approve write_file" in text
            assert "◂ write_file ✓" in text
            # the tool blocks are folds in the chat window (closed: the window shows them
            # as one line each)
            folds = nvim.lua(
                """
                local chat = T.chat()
                local win = vim.fn.win_findbuf(chat.buffer.bufnr)[1]
                local closed = {}
                vim.api.nvim_win_call(win, function()
                  for lnum = 1, vim.fn.line('$') do
                    if vim.fn.foldclosed(lnum) == lnum then
                      table.insert(closed, vim.fn.getline(lnum))
                    end
                  end
                end)
                return closed
                """
            )
            assert [line.split(" ")[0:2] for line in folds] == [
                ["▸", "write_file"],
                ["◂", "write_file"],
            ]

            # one `u` in the edited buffer restores what was there before the agent's write
            nvim.api.command("buffer " + str(app))
            nvim.api.command("normal! u")
            assert nvim.buffer_lines(app) == ORIGINAL


def test_rejected_write_leaves_the_buffer_alone(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    app = workspace / "app.py"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(*write_then_answer("app.py", "import os\nos.system('rm -rf ~')\n"))
        with neovim(workspace, home) as nvim:
            nvim.api.command("edit app.py")
            nvim.setup(agent="coder")
            nvim.lua("T.select_choice = 2")  # Reject
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend Clean up.")
            nvim.wait_for_turns(1)

            assert len(nvim.lua("return T.selects")) == 1
            assert nvim.buffer_lines(app) == ORIGINAL
            assert nvim.lua("return vim.bo[vim.fn.bufnr(...)].modified", str(app)) is False
            assert app.read_text(encoding="utf-8").splitlines() == ORIGINAL
            text = nvim.chat_text()
            assert "  → reject write_file" in text
            assert "◂ write_file ✗" in text and "[tool_denied]" in text


def test_dismissed_approval_is_a_rejection_and_a_new_file_is_created(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    notes = workspace / "notes.md"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            *write_then_answer("notes.md", "# Notes\n"),
            *write_then_answer("notes.md", "# Notes\n"),
        )
        with neovim(workspace, home) as nvim:
            nvim.setup(agent="coder")
            nvim.lua("T.select_choice = nil")  # the picker is dismissed (Esc)
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend Write notes.")
            nvim.wait_for_turns(1)
            assert not notes.exists()
            assert "  → reject write_file" in nvim.chat_text()

            # "Always allow": the file is created (CreateFile) and filled in a new buffer
            nvim.lua("T.select_choice = 3")
            nvim.api.command("RelaviumSend Write notes, please.")
            nvim.wait_for_turns(2)
            assert "  → approve_always write_file" in nvim.chat_text()
            # the new file exists (empty) and its text waits, unsaved, in its buffer
            assert notes.read_text(encoding="utf-8") == ""
            assert nvim.buffer_lines(notes) == ["# Notes"]
            assert "Created notes.md" in tool_result_sent_back(model)
            # saving writes exactly the agent's text (no extra empty line at the end)
            nvim.api.command("buffer " + str(notes))
            nvim.api.command("write")
            assert notes.read_text(encoding="utf-8") == "# Notes\n"


def test_a_write_based_on_an_older_buffer_is_refused_not_silently_dropped(
    tmp_path: Path,
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    app = workspace / "app.py"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(*write_then_answer("app.py", FIXED))
        with neovim(workspace, home) as nvim:
            nvim.api.command("edit app.py")
            nvim.setup(agent="coder")
            # The user types into app.py while the approval prompt is up, then approves: the
            # first change reaches the server at once, the second waits for Neovim's didChange
            # debounce, so the server builds its edit for a version the buffer has left.
            nvim.lua(
                """
                local path = ...
                T.select_choice = function()
                  local bufnr = vim.fn.bufnr(path)
                  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { '# mi' })
                  vim.api.nvim_buf_set_lines(bufnr, 0, 1, false, { '# mine' })
                  return 1
                end
                """,
                str(app),
            )
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend Fix add.")
            nvim.wait_for_turns(1)

            assert nvim.buffer_lines(app) == ["# mine", *ORIGINAL]
            result = tool_result_sent_back(model)
            assert "app.py changed in the editor after the agent read it" in result
            assert "◂ write_file ✗" in nvim.chat_text()


def test_an_edit_is_accepted_from_its_diff_view_and_u_undoes_it(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    app = workspace / "app.py"
    edits = [{"old": "a - b", "new": "a + b"}]
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(
                tool_calls=[
                    ScriptedToolCall(
                        id="call-1",
                        name="edit_file",
                        arguments=json.dumps({"path": "app.py", "edits": edits}),
                    )
                ]
            ),
            openai_stream(text=["Done."]),
        )
        with neovim(workspace, home) as nvim:
            nvim.api.command("edit app.py")
            nvim.setup(agent="coder")
            # The picker stays open; the user reads the diff split and presses `a` in it.
            nvim.lua(
                """
                T.select_choice = function()
                  T.diff = {
                    lines = vim.api.nvim_buf_get_lines(0, 0, -1, false),
                    filetype = vim.bo.filetype,
                    windows = #vim.api.nvim_tabpage_list_wins(0),
                  }
                  vim.defer_fn(function() vim.api.nvim_feedkeys('a', 'x', false) end, 0)
                  return false
                end
                """
            )
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend Fix add.")
            nvim.wait_for_turns(1)

            diff = nvim.lua("return T.diff")
            assert diff["filetype"] == "diff"
            assert diff["lines"][:2] == [
                "Relavium wants to change app.py (+1 -1 lines)",
                "a: approve   A: always allow for this session   r/q: reject",
            ]
            assert "-    return a - b" in diff["lines"] and "+    return a + b" in diff["lines"]
            # the split is gone once answered
            windows = nvim.lua("return #vim.api.nvim_tabpage_list_wins(0)")
            assert windows == diff["windows"] - 1
            assert "  → approve edit_file" in nvim.chat_text()
            assert nvim.buffer_lines(app) == FIXED.splitlines()
            assert "Edited app.py: 1 replacement" in tool_result_sent_back(model)

            nvim.api.command("buffer " + str(app))
            nvim.api.command("normal! u")
            assert nvim.buffer_lines(app) == ORIGINAL


def test_after_always_allow_the_chat_still_shows_each_changes_diff(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    app = workspace / "app.py"

    def edit_then_answer(call_id: str, old: str, new: str) -> list[object]:
        edits = [{"old": old, "new": new}]
        return [
            openai_stream(
                tool_calls=[
                    ScriptedToolCall(
                        id=call_id,
                        name="edit_file",
                        arguments=json.dumps({"path": "app.py", "edits": edits}),
                    )
                ]
            ),
            openai_stream(text=["Done."]),
        ]

    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            *edit_then_answer("call-1", "a - b", "a + b"),
            *edit_then_answer("call-2", "add(2, 3)", "add(2, 4)"),
        )
        with neovim(workspace, home) as nvim:
            nvim.api.command("edit app.py")
            nvim.setup(agent="coder")
            nvim.lua("T.select_choice = 3")  # Always allow for this session
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend Fix add.")
            nvim.wait_for_turns(1)
            nvim.api.command("RelaviumSend Now print add(2, 4).")
            nvim.wait_for_turns(2)

            assert len(nvim.lua("return T.selects")) == 1  # the second edit was not asked
            assert nvim.buffer_lines(app)[-1] == "print(add(2, 4))"
            text = nvim.chat_text()
            second = text[text.index("◂ edit_file ✓", text.index("call-2")) :]
            assert "    -print(add(2, 3))\n    +print(add(2, 4))" in second, second
            assert "    @@ -2,4 +2,4 @@" in second
