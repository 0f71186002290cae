"""The Neovim chat buffer over the real server: streaming, lost events, context, abort."""

from __future__ import annotations

import threading
from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, gated_stream, make_git_workspace
from tests.e2e.neovim.nvim_harness import neovim
from tests.unit.llm.wire_servers import LoopbackServer, openai_error, openai_stream

ANSWER = ["The ", "function ", "subtracts ", "instead ", "of ", "adding."]


def test_chat_streams_tokens_into_the_chat_buffer(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    gate = threading.Event()
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(gated_stream(ANSWER[:2], ANSWER[2:], gate))
        try:
            with neovim(workspace, home) as nvim:
                nvim.api.command("edit app.py")
                nvim.setup(agent="coder")
                nvim.api.command("RelaviumChat")
                nvim.wait_until("T.chat() and T.chat().session_id ~= nil", "the session to start")
                chat = nvim.lua(
                    "local b = T.chat().buffer.bufnr return {"
                    " ft = vim.bo[b].filetype, bt = vim.bo[b].buftype,"
                    " shown = #vim.fn.win_findbuf(b) }"
                )
                assert chat == {"ft": "relavium", "bt": "nofile", "shown": 1}

                nvim.api.command("RelaviumSend What is wrong with add?")
                # the first tokens are on screen while the model is still answering
                nvim.wait_until(
                    "T.chat_text():find('The function ', 1, true) ~= nil", "the first tokens"
                )
                assert "── stop" not in nvim.chat_text()
                assert nvim.lua("return T.chat().busy") is True
                # the send was answered when the turn began: no request stays open meanwhile
                assert nvim.lua("return T.pending('relavium/sendMessage')") == 0
                gate.set()
                nvim.wait_for_turns(1)

                lines = nvim.chat_lines()
                answer_at = lines.index("## coder")
                assert lines[answer_at - 3 : answer_at + 2] == [
                    "## You",
                    "What is wrong with add?",
                    "",
                    "## coder",
                    "The function subtracts instead of adding.",
                ]
                completed = [line for line in lines if line.startswith("── ")]
                assert len(completed) == 1
                assert completed[0].startswith("── stop · 50 in / 6 out tokens · $")
                header = "\n".join(lines[:3])
                assert "agent coder · model gpt-4o-mini" in header
                assert f"{workspace} (feature/chat) · app.py" in header
        finally:
            gate.set()


def test_lost_events_are_fetched_from_the_backlog_without_duplicates(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(text=ANSWER, usage=(50, 6)),
            openai_stream(text=["Second ", "answer."], usage=(60, 2)),
        )
        with neovim(workspace, home) as nvim:
            nvim.setup(agent="coder")
            nvim.api.command("RelaviumChat")
            nvim.wait_until("T.chat() and T.chat().session_id ~= nil", "the session to start")
            # Lose notifications in transit: in turn 1 its first token (a later event reveals
            # the gap), in turn 2 its last event (only a check of the quiet turn reveals that).
            nvim.lua(
                """
                local chat = require('relavium.chat')
                local client = require('relavium.client')
                local deliver = chat.on_session_event
                T.dropped, T.fetches, T.lose = {}, {}, 'agent:token'
                chat.on_session_event = function(event)
                  if event.type == T.lose then
                    T.lose = nil
                    table.insert(T.dropped, event.sequenceNumber)
                    return
                  end
                  deliver(event)
                end
                local request = client.request
                client.request = function(method, params, on_result)
                  if method == 'relavium/sessionEvents' then
                    table.insert(T.fetches, params.afterSequence)
                  end
                  return request(method, params, on_result)
                end
                """
            )
            nvim.api.command("RelaviumSend Why?")
            nvim.wait_for_turns(1)
            nvim.lua("T.lose = 'session:turn_completed'")
            nvim.api.command("RelaviumSend And then?")
            nvim.wait_for_turns(2)

            dropped = nvim.lua("return T.dropped")
            fetches = nvim.lua("return T.fetches")
            assert len(dropped) == 2
            # each gap was fetched from the log (a quiet turn may add checks that find nothing)
            assert fetches[0] == dropped[0] - 1 and fetches[-1] == dropped[1] - 1
            text = nvim.chat_text()
            assert text.count("The function subtracts instead of adding.") == 1
            assert text.count("Second answer.") == 1
            assert text.count("── stop · 50 in / 6 out tokens") == 1
            assert text.count("── stop · 60 in / 2 out tokens") == 1
            applied = nvim.lua("return T.chat().sequencer:last_sequence()")
            backlog = nvim.lua(
                "local done = nil"
                " require('relavium.client').request('relavium/sessionEvents',"
                " {sessionId = T.chat().session_id, afterSequence = 0},"
                " function(_, result) done = result end)"
                " vim.wait(10000, function() return done ~= nil end, 10)"
                " return done.events[#done.events].sequenceNumber"
            )
            assert applied == backlog


def test_ask_sends_the_selection_as_context_and_quotes_it(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(
                reasoning=["Line 2 ", "uses minus.\nSo it ", "subtracts."],
                text=["It ", "subtracts."],
                usage=(30, 2),
            )
        )
        with neovim(workspace, home) as nvim:
            nvim.api.command("edit app.py")
            nvim.setup(agent="coder")
            nvim.api.command("1,2RelaviumAsk What is wrong here?")
            nvim.wait_for_turns(1)

            header = "\n".join(nvim.chat_lines()[:3])
            assert f"{workspace} (feature/chat) · app.py:1-2" in header
            sent = model.requests[0].json()["messages"]
            # the selection reached the session context (the server puts it in the system
            # prompt) and its text is quoted in the user's message
            assert "return a - b" in sent[0]["content"]
            user = sent[-1]["content"]
            assert user.startswith("About `app.py` lines 1-2:\n\n```python\ndef add(a, b):\n")
            assert user.endswith("```\n\nWhat is wrong here?")
            assert "It subtracts." in nvim.chat_text()
            # the reasoning streamed into a folded block above the answer
            lines = nvim.chat_lines()
            start = lines.index("▸ thinking")
            assert lines[start + 1 : start + 3] == [
                "    Line 2 uses minus.",
                "    So it subtracts.",
            ]
            closed = nvim.lua(
                "local lnum = ... local win = vim.fn.win_findbuf(T.chat().buffer.bufnr)[1]"
                " return vim.api.nvim_win_call(win, function()"
                " return { vim.fn.foldclosed(lnum), vim.fn.foldclosedend(lnum) } end)",
                start + 1,
            )
            assert closed == [start + 1, start + 3]


def test_editor_state_follows_the_cursor_debounced(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    (workspace / "other.py").write_text("x = 1\ny = 2\nz = 3\n", encoding="utf-8")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        with neovim(workspace, home) as nvim:
            nvim.api.command("edit app.py")
            nvim.setup(agent="coder")
            nvim.lua(
                """
                local client = require('relavium.client')
                local notify = client.notify
                T.states = {}
                client.notify = function(method, params)
                  if method == 'relavium/editorState' then table.insert(T.states, params) end
                  return notify(method, params)
                end
                """
            )
            nvim.api.command("edit other.py")
            # a visual selection of lines 2-3, made with keys as a user would
            nvim.api.input("2GVj")
            nvim.wait_until(
                "#T.states > 0 and T.states[#T.states].selection ~= nil",
                "a debounced editorState with the selection",
            )
            states = nvim.lua("return T.states")
            other_uri = (workspace / "other.py").as_uri()
            assert states[-1] == {
                "uri": other_uri,
                "selection": {
                    "start": {"line": 1, "character": 0},
                    "end": {"line": 3, "character": 0},
                },
            }
            # BufEnter + several cursor moves were coalesced by the debounce timer
            assert len(states) <= 2
            nvim.api.command("RelaviumChat")
            nvim.wait_until("T.chat() and T.chat().session_id ~= nil", "the session to start")
            assert "· other.py:2-3" in "\n".join(nvim.chat_lines()[:3])


def test_abort_stops_a_running_turn(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    gate = threading.Event()
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(gated_stream(["Working ", "on "], ["it."], gate))
        try:
            with neovim(workspace, home) as nvim:
                nvim.setup(agent="coder")
                nvim.api.command("RelaviumChat")
                nvim.wait_until("T.chat() and T.chat().session_id ~= nil", "the session")
                # the chat buffer's own mappings: <CR> prompts for a message, <C-c> aborts
                nvim.lua("T.input_answer = 'Do something long'")
                assert nvim.lua("return vim.bo.filetype") == "relavium"
                nvim.api.input("<CR>")
                nvim.wait_until("T.chat_text():find('Working on', 1, true) ~= nil", "tokens")
                assert nvim.lua("return T.inputs") == ["You: "]
                assert "## You\nDo something long" in nvim.chat_text()
                nvim.api.input("<C-c>")
                nvim.wait_for_turns(1)
                assert "── aborted ·" in nvim.chat_text()
                # :RelaviumAbort with nothing running says so and changes nothing
                nvim.api.command("RelaviumAbort")
                nvim.wait_until(
                    "vim.api.nvim_exec('messages', true):find('no turn is running', 1, true)",
                    "the 'nothing to abort' message",
                )
        finally:
            gate.set()


def test_errors_render_with_their_code(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_error(401, "invalid api key", error_type="authentication_error"))
        with neovim(workspace, home) as nvim:
            nvim.setup(agent="coder")
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend Hello?")
            nvim.wait_for_turns(1)
            text = nvim.chat_text()
            assert "✗ error [provider_auth]: " in text
            assert "── error · " in text
            # a failed request shows the server's stable error code too
            nvim.api.command("RelaviumResume no-such-session")
            nvim.wait_until(
                "T.chat_text():find('✗ error [session_not_found]', 1, true) ~= nil",
                "the request error in the chat",
            )
