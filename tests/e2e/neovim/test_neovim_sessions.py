"""Sessions from Neovim: resume after restarting editor and server, search, export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.e2e.neovim.nvim_harness import neovim
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

QUESTION = "Why does add subtract?"
ANSWER = "Because it uses minus."


def first_session(nvim: Any) -> str:
    nvim.setup(agent="coder")
    nvim.api.command("RelaviumChat")
    nvim.api.command("RelaviumSend " + QUESTION)
    nvim.wait_for_turns(1)
    return str(nvim.session_id())


def test_resume_after_restarting_neovim_and_the_server_shows_the_transcript(
    tmp_path: Path,
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(text=["Because ", "it uses ", "minus."], usage=(40, 5)),
            openai_stream(
                tool_calls=[
                    ScriptedToolCall(
                        id="call-r", name="read_file", arguments=json.dumps({"path": "app.py"})
                    )
                ],
                usage=(50, 8),
            ),
            openai_stream(text=["It ", "returns ", "a - b."], usage=(60, 3)),
            openai_stream(text=["Still ", "here."], usage=(90, 2)),
        )
        with neovim(workspace, home) as nvim:
            session_id = first_session(nvim)
            nvim.api.command("RelaviumSend Show me the code.")
            nvim.wait_for_turns(2)
            # stop the server the polite way (shutdown + exit) before leaving Neovim
            nvim.lua("T.stopped = false require('relavium').stop(function() T.stopped = true end)")
            nvim.wait_until("T.stopped", "the server to exit")
            assert nvim.lua("return require('relavium.client').get() == nil") is True

        with neovim(workspace, home) as again:
            again.setup(agent="coder")
            again.lua("T.input_answer = 'minus'; T.select_choice = 1")
            again.api.command("RelaviumSessions")
            again.wait_until(
                "T.chat_text():find('── resumed ──', 1, true) ~= nil", "the resumed transcript"
            )
            assert again.lua("return T.inputs") == ["Search sessions (empty for all): "]
            selects = again.lua("return T.selects")
            assert len(selects) == 1 and len(selects[0]["items"]) == 1
            assert selects[0]["kind"] == "relavium_session"
            assert "coder · idle · 6 messages" in selects[0]["items"][0]
            assert again.session_id() == session_id

            lines = again.chat_lines()
            assert f"session {session_id}" in lines[1]
            text = "\n".join(lines)
            assert f"## You\n{QUESTION}\n\n## coder\n{ANSWER}" in text
            assert "## You\nShow me the code." in text
            assert "▸ read_file app.py" in text
            assert "◂ read_file ✓" in text
            assert text.index("It returns a - b.") < text.index("── resumed ──")

            # the resumed chat goes on: the model gets the old history with the new message
            again.api.command("RelaviumSend Are you there?")
            again.wait_for_turns(1)
            assert again.chat_text().index("── resumed ──") < again.chat_text().index("Still here.")
            history = model.requests[-1].json()["messages"]
            texts = [m.get("content") for m in history]
            assert QUESTION in texts and ANSWER in texts and "Are you there?" in texts

        with neovim(workspace, home) as third:
            third.setup(agent="coder")
            third.api.command("RelaviumResume " + session_id)
            third.wait_until(
                "T.chat_text():find('── resumed ──', 1, true) ~= nil", "the resumed transcript"
            )
            assert "Still here." in third.chat_text()
            assert third.lua("return T.selects") == []


def test_export_opens_an_unnamed_yaml_buffer_that_parses(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(text=["Because ", "it uses ", "minus."], usage=(40, 5)))
        with neovim(workspace, home) as nvim:
            session_id = first_session(nvim)
            nvim.api.command("RelaviumExport")
            nvim.wait_until(
                "vim.bo.filetype == 'yaml' and vim.api.nvim_buf_line_count(0) > 1",
                "the exported YAML buffer",
            )
            exported = nvim.lua(
                "return { name = vim.api.nvim_buf_get_name(0), buftype = vim.bo.buftype,"
                " lines = vim.api.nvim_buf_get_lines(0, 0, -1, false),"
                " suggested = vim.b.relavium_suggested_name }"
            )
            assert exported["name"] == ""
            assert exported["buftype"] == ""
            assert str(exported["suggested"]).endswith(".relavium.yaml")
            workflow = YAML(typ="safe").load("\n".join(exported["lines"]) + "\n")
            assert workflow["metadata"]["relaviumExport"]["sessionId"] == session_id
            turn = next(node for node in workflow["nodes"] if node["id"] == "turn-1")
            assert turn["agent_ref"] == "coder"
            assert turn["prompt_template"] == QUESTION
            nvim.wait_until(
                "T.chat_text():find('── exported (workflow) to untitled ──', 1, true) ~= nil",
                "the export event in the chat",
            )


def test_replay_opens_the_replay_session_in_a_chat(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(text=["Because ", "it uses ", "minus."], usage=(40, 5)))
        with neovim(workspace, home) as nvim:
            session_id = first_session(nvim)
            nvim.api.command("RelaviumReplay recorded")
            nvim.wait_until(
                f"T.chat() and T.chat().session_id ~= '{session_id}'"
                " and T.chat_text():find('── replay (recorded)', 1, true) ~= nil",
                "the replay chat and its report",
            )
            text = nvim.chat_text()
            # The replayed turn streamed into the new chat, from the recording alone.
            assert QUESTION in text and ANSWER in text
            assert "1 turn(s), identical to the original" in text
            assert len(model.requests) == 1
