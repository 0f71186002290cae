""":RelaviumRewind in a real Neovim: files go back through workspace/applyEdit, `u` undoes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.e2e.neovim.nvim_harness import neovim
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

ORIGINAL = ["def add(a, b):", "    return a - b", "", "", "print(add(2, 3))"]
AFTER_1 = ["def add(a, b):", "    return a + b", "", "", "print(add(2, 3))"]
AFTER_2 = ["def add(a, b):", "    return a + b", "", "", "print(add(2, 4))"]


def edit_turn(call_id: str, old: str, new: str) -> list[object]:
    arguments = json.dumps({"path": "app.py", "edits": [{"old": old, "new": new}]})
    return [
        openai_stream(
            tool_calls=[ScriptedToolCall(id=call_id, name="edit_file", arguments=arguments)]
        ),
        openai_stream(text=["Done."]),
    ]


def test_rewind_to_the_first_turn_restores_the_buffer_and_u_undoes_it(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    app = workspace / "app.py"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            *edit_turn("c1", "a - b", "a + b"),
            *edit_turn("c2", "add(2, 3)", "add(2, 4)"),
        )
        with neovim(workspace, home) as nvim:
            nvim.api.command("edit app.py")
            nvim.setup(agent="coder", approval="never_ask")
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend Fix add.")
            nvim.wait_for_turns(1)
            nvim.api.command("RelaviumSend And the call.")
            nvim.wait_for_turns(2)
            assert nvim.buffer_lines(app) == AFTER_2
            first_chat = nvim.lua("return T.chat().buffer.bufnr")

            nvim.lua("T.select_choice = 2")  # newest first: the second entry is turn 1
            nvim.api.command("RelaviumRewind")
            nvim.wait_until(
                f"T.count(table.concat(vim.api.nvim_buf_get_lines({first_chat}, 0, -1, false),"
                " '\\n'), 'continues in session') == 1",
                "the rewind summary",
            )

            picked = nvim.lua("return T.selects[#T.selects]")
            assert picked["kind"] == "relavium_rewind"
            assert picked["items"][1].startswith("before message 1 · ")
            assert picked["items"][1].endswith(" · app.py")
            summary = nvim.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", first_chat)
            assert "⟲ rewound to before message 1" in summary
            assert "  restored: app.py" in summary
            assert nvim.buffer_lines(app) == ORIGINAL
            # the fork opened as the current chat, empty: it ends before message 1
            nvim.wait_until(f"T.chat().buffer.bufnr ~= {first_chat}", "the forked chat")

            nvim.api.command("buffer " + str(app))
            nvim.api.command("normal! u")  # one undo step per agent edit: the rewind's
            assert nvim.buffer_lines(app) == AFTER_2
            nvim.api.command("normal! u")
            assert nvim.buffer_lines(app) == AFTER_1
