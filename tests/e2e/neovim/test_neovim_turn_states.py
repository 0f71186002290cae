"""Honest turn states in the Neovim chat (issue 37): abort, a server crash, queued messages.

- Abort while an edit waits for approval: the user's message stays, marked cancelled; the
  question is marked Cancelled (never "approved"), its diff split closes, nothing is written.
- The server killed while an edit waits for approval: the plugin starts a new one, the chat
  says "The server restarted — this turn was stopped", the card is marked interrupted, and
  the next message is answered by the new server.
- Messages sent before the session exists or while a turn runs are queued, shown as queued
  under the chat, and all answered in order: none is dropped.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, gated_stream, make_git_workspace
from tests.e2e.neovim.nvim_harness import Neovim, neovim
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

ORIGINAL = "def add(a, b):\n    return a - b\n\n\nprint(add(2, 3))\n"
EDIT = {"path": "app.py", "edits": [{"old": "a - b", "new": "a + b"}]}
# The approval picker stays open and the diff split is shown; instead of answering, the user
# does `T.instead()`. (The plugin waits for the answer inside the server's request, so what
# happens meanwhile is driven from inside Neovim, as the user's keys would be.)
INSTEAD_OF_ANSWERING = """
T.select_choice = function()
  T.diff_windows = #vim.api.nvim_tabpage_list_wins(0)
  vim.defer_fn(T.instead, 0)
  return false
end
"""


def edit_call(call_id: str) -> object:
    return openai_stream(
        tool_calls=[ScriptedToolCall(id=call_id, name="edit_file", arguments=json.dumps(EDIT))]
    )


def server_pids(nvim: Neovim) -> list[int]:
    """The relavium servers the editor runs (its child processes running relavium_lsp)."""
    editor = int(nvim.lua("return vim.fn.getpid()"))
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == editor and b"relavium_lsp" in command and b"serve" in command:
            found.append(int(entry.name))
    return found


def test_abort_mid_approval_keeps_the_message_and_cancels_the_question(
    tmp_path: Path, nvim_version: str
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    app = workspace / "app.py"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(edit_call("call-1"), openai_stream(text=["Fine."]))
        with neovim(workspace, home) as nvim:
            nvim.api.command("edit app.py")
            nvim.setup(agent="coder")
            if nvim_version == "0.11":
                # Neovim stays responsive while the question waits (the handler yields): the
                # user goes to the chat and types the abort there, as keys.
                nvim.lua("T.instead = function() end")
                nvim.lua(INSTEAD_OF_ANSWERING)
                nvim.api.command("RelaviumChat")
                nvim.api.command("RelaviumSend Fix add.")
                nvim.wait_until("T.diff_windows ~= nil", "the question and its diff split")
                nvim.api.input("<C-w>p:RelaviumAbort<CR>")
            else:
                # 0.7 waits for the answer in vim.wait, which runs no typed keys: the abort
                # comes from a callback, as a picker's would
                nvim.lua("T.instead = function() vim.cmd('RelaviumAbort') end")
                nvim.lua(INSTEAD_OF_ANSWERING)
                nvim.api.command("RelaviumChat")
                nvim.api.command("RelaviumSend Fix add.")
            nvim.wait_for_turns(1)
            windows_while_asking = nvim.lua("return T.diff_windows")
            assert len(nvim.lua("return T.selects")) == 1

            lines = nvim.chat_lines()
            assert "## You · cancelled" in lines
            assert lines[lines.index("## You · cancelled") + 1] == "Fix add."
            text = "\n".join(lines)
            assert "? approval: edit_file (fs_write) app.py · Cancelled" in lines
            # the call's card ends as the server reports it: not done, cancelled
            assert "◂ edit_file ✗" in text and "[cancelled]" in text
            assert any(line.startswith("── aborted ·") for line in lines)
            assert "→ approve" not in text and "→ reject" not in text
            # the diff split closed with the question; nothing reached the file
            assert nvim.lua("return #vim.api.nvim_tabpage_list_wins(0)") == windows_while_asking - 1
            assert nvim.buffer_lines(app) == ORIGINAL.splitlines()
            assert app.read_text(encoding="utf-8") == ORIGINAL

            # the chat goes on: the next message gets its answer
            nvim.api.command("RelaviumSend Never mind.")
            nvim.wait_for_turns(2)
            assert "## You\nNever mind." in nvim.chat_text()
            assert nvim.chat_lines()[-1].startswith("── stop ·")


def test_a_server_killed_mid_approval_restarts_and_the_turn_is_marked_stopped(
    tmp_path: Path,
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    app = workspace / "app.py"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(edit_call("call-1"), openai_stream(text=["Back again."]))
        with neovim(workspace, home) as nvim:
            nvim.api.command("edit app.py")
            nvim.setup(agent="coder")
            [first_server] = server_pids(nvim)
            nvim.lua(
                "local pid = ... T.instead = function() vim.loop.kill(pid, 'sigkill') end",
                first_server,
            )
            nvim.lua(INSTEAD_OF_ANSWERING)
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend Fix add.")
            nvim.wait_until(
                "T.chat_text():find('The server restarted — this turn was stopped', 1, true)",
                "the chat to say the turn stopped",
            )
            lines = nvim.chat_lines()
            assert "? approval: edit_file (fs_write) app.py · Cancelled" in lines
            assert any(
                line.startswith("▸ edit_file") and line.endswith(" · interrupted") for line in lines
            )
            assert "## You" in lines  # not cancelled: the turn was cut, the message stands
            assert nvim.lua("return T.chat().busy") is False
            windows_while_asking = nvim.lua("return T.diff_windows")
            assert nvim.lua("return #vim.api.nvim_tabpage_list_wins(0)") == windows_while_asking - 1
            # a new server runs in its place
            nvim.wait_until("require('relavium.client').is_ready()", "the restarted server")
            assert [pid for pid in server_pids(nvim) if pid != first_server] != []

            nvim.api.command("RelaviumSend Are you there?")
            nvim.wait_until("T.chat_text():find('Back again.', 1, true)", "the new server's answer")
            nvim.wait_until("not T.chat().busy", "the turn to complete")
            assert app.read_text(encoding="utf-8") == ORIGINAL
            assert nvim.buffer_lines(app) == ORIGINAL.splitlines()


def test_messages_sent_early_or_during_a_turn_are_queued_and_all_answered(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    gate = threading.Event()
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            gated_stream(["One ", "moment "], ["please."], gate),
            openai_stream(text=["Second answer."]),
            openai_stream(text=["Third answer."]),
        )
        try:
            with neovim(workspace, home) as nvim:
                nvim.setup(agent="coder")
                # Two fast sends while the session is still starting (the "two Enters"):
                # neither is lost.
                nvim.api.command("RelaviumChat")
                nvim.api.command("RelaviumSend first")
                nvim.api.command("RelaviumSend second")
                nvim.wait_until("T.chat_text():find('One moment', 1, true)", "the first answer")
                assert nvim.lua("return T.chat().buffer:footer_lines()") == ["◦ queued: second"]
                # a third one while the turn runs waits behind the second
                nvim.api.command("RelaviumSend third")
                assert nvim.lua("return T.chat().buffer:footer_lines()") == [
                    "◦ queued: second",
                    "◦ queued: third",
                ]
                assert "## You\nsecond" not in nvim.chat_text()

                gate.set()
                nvim.wait_for_turns(3)
                text = nvim.chat_text()
                order = [
                    text.index(piece)
                    for piece in (
                        "## You\nfirst",
                        "One moment please.",
                        "## You\nsecond",
                        "Second answer.",
                        "## You\nthird",
                        "Third answer.",
                    )
                ]
                assert order == sorted(order)
                assert nvim.lua("return T.chat().buffer:footer_lines()") == []
                # the model saw each message once, in order
                asked = [request.json()["messages"][-1]["content"] for request in model.requests]
                assert asked == ["first", "second", "third"]
        finally:
            gate.set()
