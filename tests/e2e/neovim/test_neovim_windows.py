"""Two real Neovims on one history (issue 18): each sees the other's sessions and turns."""

from __future__ import annotations

import threading
from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, gated_stream, make_git_workspace
from tests.e2e.neovim.nvim_harness import neovim
from tests.unit.llm.wire_servers import LoopbackServer

LIST_LINE = "(vim.api.nvim_buf_get_lines(T.list, 1, 2, false)[1] or '')"


def test_two_neovims_see_each_others_sessions_and_running_turns(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    gate = threading.Event()
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(gated_stream(["Because ", "it "], ["uses ", "minus."], gate))
        with neovim(workspace, home) as a, neovim(workspace, home) as b:
            b.setup(agent="coder")
            b.lua("T.list = require('relavium').session_list()")
            b.wait_until(f"{LIST_LINE} == '(no sessions yet)'", "B's empty session list")

            a.setup(agent="coder")
            a.api.command("RelaviumChat")
            a.api.command("RelaviumSend Why does add subtract?")
            # The list in B updates by itself and shows A's turn as running.
            b.wait_until(
                f"{LIST_LINE}:find('streaming', 1, true) ~= nil", "B to list A's running session"
            )
            a.wait_until("T.chat() and T.chat().session_id ~= nil", "A's session id")
            session = a.session_id()
            assert b.lua("return require('relavium.session_list').session_at(2)") == session

            # B follows the running turn and is refused, with the server's words, if it sends.
            b.api.command(f"RelaviumResume {session}")
            b.wait_until("T.chat_text():find('── resumed ──', 1, true) ~= nil", "B's chat")
            assert "── a turn is running in another window ──" in b.chat_text()
            b.api.command("RelaviumSend me too")
            # The server's words ("… is running a turn in another window (process N) …"), not
            # the resume notice above, which also says "another window".
            b.wait_until(
                "T.chat_text():find('running a turn in another window', 1, true) ~= nil",
                "B to show the refusal",
            )
            gate.set()
            a.wait_for_turns(1)
            b.wait_until("T.chat_text():find('minus.', 1, true) ~= nil", "A's answer live in B")
            b.wait_until(f"{LIST_LINE}:find('idle', 1, true) ~= nil", "B to list it idle")
