"""Sessions that work with other sessions, over the real server (issue 23 remainder).

Configurable delegation limits, a child's cost cap across a restart, handoff input filters
and their replay audit, and peer messages between sessions — each on the loopback provider
with a real SQLCipher history.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import (
    configure_loopback_provider,
    editor,
    make_git_workspace,
)
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream


def _delegate(call_id: str, task: str, **extra: object) -> ScriptedToolCall:
    arguments = json.dumps({"agent": "coder", "task": task, "reason": "coder knows", **extra})
    return ScriptedToolCall(call_id, "delegate", arguments)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    return workspace, home


def _add_agent(workspace: Path, agent_id: str, tools: str) -> None:
    (workspace / ".relavium" / "agents" / f"{agent_id}.agent.yaml").write_text(
        f"id: {agent_id}\nname: {agent_id.title()}\n"
        "model: gpt-4o-mini\nprovider: loop\n"
        f'system_prompt: "You are {agent_id}."\n'
        f"tools: [{tools}]\n",
        encoding="utf-8",
    )


def _project_toml(workspace: Path, text: str) -> Path:
    path = workspace / ".relavium" / "project.toml"
    path.write_text(text, encoding="utf-8")
    return path


async def test_delegation_limits_come_from_configuration(setup: tuple[Path, Path]) -> None:
    """An agent's ``[delegation.agents.*]`` table refuses what the defaults would allow, and
    a malformed block is an error naming the file and line."""
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        _add_agent(workspace, "lead", "delegate")
        _project_toml(workspace, "[delegation.agents.lead]\nmax_depth = 0\n")
        model.script(
            openai_stream(tool_calls=[_delegate("d1", "Name the function in app.py.")]),
            openai_stream(text=["I will do it myself."]),
        )
        async with editor(workspace, home) as client:
            parent = (await client.request(methods.START_SESSION, {"agentRef": "lead"}))[
                "sessionId"
            ]
            done = await client.request(
                methods.SEND_MESSAGE, {"sessionId": parent, "text": "What is in app.py?"}
            )
            assert done["text"] == "I will do it myself."
            transcript = await client.request(methods.GET_TRANSCRIPT, {"sessionId": parent})
            result = transcript["messages"][2]["content"][0]
            assert result["isError"] is True
            assert "may not delegate" in result["result"]
            listed = await client.request(methods.LIST_SESSIONS, {})
            assert not [s for s in listed["sessions"] if s.get("parentSessionId")]

            path = _project_toml(workspace, "[delegation]\nmax_concurrent_children = 0\n")
            with pytest.raises(JsonRpcException) as refused:
                await client.request(methods.START_SESSION, {"agentRef": "lead"})
            assert f"{path}:2" in str(refused.value)
            assert "max_concurrent_children" in str(refused.value)
