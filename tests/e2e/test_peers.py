"""Sessions that work with other sessions, over the real server (issue 23 remainder).

Configurable delegation limits, a child's cost cap across a restart, handoff input filters
and their replay audit, and peer messages between sessions — each on the loopback provider
with a real SQLCipher history.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from relavium_lsp.contracts.usage import TokenUsage
from relavium_lsp.llm.pricing import price_call
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


def _cli_env(home: Path) -> dict[str, str]:
    """The environment the e2e server gets (same history, same key file)."""
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "RELAVIUM_HOME": str(home / ".relavium"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        "XDG_CONFIG_HOME": str(home / "xdg-config"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }


def _cost(input_tokens: int) -> int:
    return price_call(
        "gpt-4o-mini", TokenUsage(input_tokens=input_tokens, output_tokens=5)
    ).cost_microcents


async def test_a_childs_cost_cap_survives_a_restart(setup: tuple[Path, Path]) -> None:
    """The child may spend what was left under the parent's cap when it started; that cap is
    kept with its handoff, so after a restart the resumed child is still refused past it —
    although the workspace's own cap (which only warns) would have let its call go out."""
    workspace, home = setup
    parent_cost, child_cost = _cost(100_000), _cost(200_000)
    cap = parent_cost + child_cost * 3 // 4
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        _add_agent(workspace, "lead", "delegate")
        _project_toml(workspace, f'[chat]\nmax_cost_microcents = {cap}\non_exceed = "warn"\n')
        model.script(
            openai_stream(tool_calls=[_delegate("d1", "Sum it up.")], usage=(100_000, 5)),
            openai_stream(text=["Summed."], usage=(200_000, 5)),
            openai_stream(text=["Done."]),
        )
        async with editor(workspace, home) as client:
            parent = (await client.request(methods.START_SESSION, {"agentRef": "lead"}))[
                "sessionId"
            ]
            done = await client.request(methods.SEND_MESSAGE, {"sessionId": parent, "text": "Go"})
            assert done["text"] == "Done."
            listed = await client.request(methods.LIST_HANDOFFS, {"sessionId": parent})
            handoff = listed["handoffs"][0]
            assert handoff["costCapMicrocents"] == cap - parent_cost
            assert listed["audit"] == []
            child = handoff["childSessionId"]

    # A replay of the parent (the CLI, its own process) replays its handoff: audited.
    replay = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "relavium_lsp",
        "sessions",
        "replay",
        parent,
        "--json",
        env=_cli_env(home),
        cwd=workspace,
        stdout=asyncio.subprocess.PIPE,
    )
    output, _ = await replay.communicate()
    assert replay.returncode == 0, output
    assert json.loads(output)["turnsReplayed"] == 1

    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(text=["never sent"]))
        async with editor(workspace, home) as client:
            resumed = await client.request(methods.RESUME_SESSION, {"sessionId": child})
            assert resumed["session"]["parentSessionId"] == parent
            refused = await client.request(
                methods.SEND_MESSAGE, {"sessionId": child, "text": "And once more?"}
            )
            assert refused["error"]["code"] == "budget_exceeded"
            assert str(cap - parent_cost) in refused["error"]["message"]
            assert model.requests == []
            # Loading the child in a new process resumed its handoff: audited on both sides.
            for session_id in (parent, child):
                audit = (await client.request(methods.LIST_HANDOFFS, {"sessionId": session_id}))[
                    "audit"
                ]
                assert [(a["action"], a["handoffId"], a["childSessionId"]) for a in audit] == [
                    ("replayed", handoff["id"], child),
                    ("resumed", handoff["id"], child),
                ]
                assert audit[0]["detail"] == "replayed 1 turns, 0 differences"


async def test_handoff_input_filters(setup: tuple[Path, Path]) -> None:
    """What a child receives of its parent's chat: chosen per call over the agent's
    configuration, recorded in the handoff row, tool results stripped on request."""
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        _add_agent(workspace, "lead", "read_file, delegate")
        _project_toml(workspace, '[delegation.agents.lead]\ninput_filter = "full_history"\n')
        read = ScriptedToolCall("r1", "read_file", json.dumps({"path": "app.py"}))
        model.script(
            openai_stream(tool_calls=[read]),
            openai_stream(text=["app.py defines add."]),
            # The call chooses last_n(3) without tool results.
            openai_stream(
                tool_calls=[
                    _delegate(
                        "d1",
                        "Document add.",
                        input_filter="last_n",
                        last_n=3,
                        strip_tool_results=True,
                    )
                ]
            ),
            openai_stream(text=["Documented."]),
            openai_stream(text=["ok"]),
            # No choice in the call: the agent's configured full history.
            openai_stream(tool_calls=[_delegate("d2", "Test add.")]),
            openai_stream(text=["Tested."]),
            openai_stream(text=["ok again"]),
        )
        async with editor(workspace, home) as client:
            parent = (await client.request(methods.START_SESSION, {"agentRef": "lead"}))[
                "sessionId"
            ]
            for text in ("Read app.py", "Delegate the docs", "Now the tests"):
                await client.request(methods.SEND_MESSAGE, {"sessionId": parent, "text": text})
            handoffs = (await client.request(methods.LIST_HANDOFFS, {"sessionId": parent}))[
                "handoffs"
            ]
            assert [h["inputFilter"] for h in handoffs] == [
                {"kind": "last_n", "lastN": 3, "stripToolResults": True},
                {"kind": "full_history", "stripToolResults": False},
            ]
            assert [h["contextMessages"] for h in handoffs] == [3, 9]

            async def handed_over(child: str) -> tuple[str, str]:
                messages = (await client.request(methods.GET_TRANSCRIPT, {"sessionId": child}))[
                    "messages"
                ]
                task, context = messages[0]["content"]
                return task["text"], context["text"]

            task, context = await handed_over(handoffs[0]["childSessionId"])
            assert task == "Document add."
            assert "lead agent's conversation (3 messages, last_n(3), tool results stripped)" in (
                context
            )
            assert "[assistant lead] app.py defines add." in context
            assert "[user] Delegate the docs" in context
            assert "Read app.py" not in context  # older than the last 3
            assert "def add" not in context  # the file's text was a tool result

            task, context = await handed_over(handoffs[1]["childSessionId"])
            assert task == "Test add."
            assert "(9 messages, full_history)" in context
            assert "[user] Read app.py" in context
            assert '(calls read_file {"path": "app.py"})' in context
            assert "(read_file returned: " in context and "def add" in context
            assert "(calls delegate " in context and "Documented." in context
            # The child's model got the context as part of its task message.
            child_request = model.requests[6].json()
            assert "Context handed over from the lead agent" in json.dumps(child_request)
