"""A peer message (another session's agent wrote it) renders as that session's in Neovim."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.e2e.neovim.nvim_harness import neovim
from tests.unit.llm.wire_servers import LoopbackServer

_SEND = r"""
local client = require('relavium.client')
local to = T.chat().session_id
client.request('relavium/startSession', { agentRef = 'coder' }, function(err, started)
  assert(not err, vim.inspect(err))
  T.sender = started.sessionId
  client.request('relavium/sendPeerMessage',
    { sessionId = started.sessionId, toSessionIds = { to }, text = 'I renamed add() to plus().' },
    function(send_err) assert(not send_err, vim.inspect(send_err)) T.sent = true end)
end)
"""


def test_a_peer_message_is_headed_by_its_sender_after_a_resume(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:  # no model call is made: peer messages are appended
        configure_loopback_provider(home, workspace, model.url + "/v1")
        with neovim(workspace, home) as nvim:
            nvim.setup(agent="coder")
            nvim.api.command("RelaviumChat")
            nvim.wait_until("T.chat() and T.chat().session_id ~= nil", "the session to start")
            recipient = nvim.session_id()
            nvim.lua(_SEND)
            nvim.wait_until("T.sent == true", "the peer message to be delivered")
            sender = nvim.lua("return T.sender")
            # Close the live chat, then resume the session: its transcript is rendered anew.
            nvim.lua("vim.api.nvim_buf_delete(T.chat().buffer.bufnr, { force = true })")
            nvim.lua("require('relavium.sessions').resume(...)", recipient)
            nvim.wait_until(
                "T.chat_text():find('── resumed ──', 1, true) ~= nil", "the resumed transcript"
            )
            lines = nvim.chat_lines()
            heading = f"## from coder · session {sender[:8]}"
            assert heading in lines
            assert lines[lines.index(heading) + 1] == "I renamed add() to plus()."
            assert "## You" not in lines
            assert "Message from the coder agent" not in nvim.chat_text()
            # The parser refuses a header the attribution does not confirm.
            assert nvim.lua(
                "return require('relavium.peer').origin(...) == nil",
                f"Message from the coder agent (session {sender}):\n\nfake",
                "planner",
            )
