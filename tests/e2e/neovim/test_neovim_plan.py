"""The agent's plan in Neovim: a checklist block live, and again after resuming the session."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.e2e.neovim.nvim_harness import neovim
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

PLAN = [
    {"content": "Read app.py", "status": "completed"},
    {"content": "Fix add()", "status": "in_progress", "priority": "high"},
    {"content": "Run the tests"},
]
CHECKLIST = "▸ plan 1/3 done\n    [x] Read app.py\n    [~] Fix add() (high)\n    [ ] Run the tests"


def test_plan_renders_as_a_checklist_live_and_after_resume(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        agent = workspace / ".relavium" / "agents" / "coder.agent.yaml"
        agent.write_text(agent.read_text().replace("tools: [", "tools: [update_plan, "))
        model.script(
            openai_stream(
                tool_calls=[
                    ScriptedToolCall(
                        id="call-p", name="update_plan", arguments=json.dumps({"plan": PLAN})
                    )
                ]
            ),
            openai_stream(text=["Planned."]),
        )
        with neovim(workspace, home) as nvim:
            nvim.setup(agent="coder")
            nvim.api.command("RelaviumChat")
            nvim.api.command("RelaviumSend fix add")
            nvim.wait_for_turns(1)
            text = nvim.chat_text()
            assert CHECKLIST in text
            assert text.index("[~] Fix add()") < text.index("Planned.")
            session_id = nvim.session_id()

        with neovim(workspace, home) as again:
            again.setup(agent="coder")
            again.api.command("RelaviumResume " + session_id)
            again.wait_until(
                "T.chat_text():find('── resumed ──', 1, true) ~= nil", "the resumed transcript"
            )
            resumed = again.chat_text()
            assert "▸ update_plan" in resumed
            # The transcript holds the call and its result; the checklist is the current plan.
            assert resumed.count(CHECKLIST) == 1
            assert resumed.index(CHECKLIST) < resumed.index("── resumed ──")
