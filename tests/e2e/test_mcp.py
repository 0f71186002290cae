"""MCP servers behind a real ``relavium-lsp serve`` and ``relavium-lsp acp`` process.

The model is a loopback OpenAI-compatible server; the MCP servers are real processes (the
probe server written with the SDK's server side, the published ``mcp-server-time``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from acp.schema import AvailableCommandsUpdate, EnvVariable, McpServerStdio, ToolCallStart
from pygls.exceptions import JsonRpcInvalidParams

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import configure_loopback_provider, editor, make_git_workspace
from tests.unit.acp.acp_client import RecordingClient, spawn_acp
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream
from tests.unit.mcp.mcp_harness import PROBE_SERVER, probe_table, time_server_table

pytestmark = pytest.mark.e2e


def echo_call(call_id: str, tool: str, text: str) -> ScriptedToolCall:
    return ScriptedToolCall(id=call_id, name=tool, arguments=json.dumps({"text": text}))


def select_tools(workspace: Path, tools: list[str]) -> None:
    """Let the loopback agent (``coder``) use these tools."""
    agent = workspace / ".relavium" / "agents" / "coder.agent.yaml"
    text = agent.read_text(encoding="utf-8").splitlines()
    agent.write_text(
        "\n".join(line for line in text if not line.startswith("tools:"))
        + f"\ntools: {json.dumps(tools)}\n",
        encoding="utf-8",
    )


async def test_a_project_server_over_lsp_trust_call_and_list(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    marker = tmp_path / "probe-started"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        select_tools(workspace, ["read_file", "mcp:probe", "mcp:time"])
        (workspace / ".relavium" / "project.toml").write_text(
            probe_table(args=["--marker", str(marker)]), encoding="utf-8"
        )
        with (home / ".relavium" / "config.toml").open("a", encoding="utf-8") as config:
            config.write("\n" + time_server_table())
        model.script(
            openai_stream(tool_calls=[echo_call("call-1", "mcp__probe__echo", "hi")]),
            openai_stream(text=["It said hi."]),
        )
        async with editor(workspace, home) as client:
            before = await client.request(methods.LIST_TOOLS, {"workingDir": str(workspace)})
            servers = {server["name"]: server for server in before["servers"]}
            assert servers["probe"]["origin"] == "project"
            assert servers["probe"]["trusted"] is False
            assert servers["probe"]["state"] == "idle"
            assert servers["time"] == {
                "name": "time",
                "origin": "user",
                "transport": "stdio",
                "target": servers["time"]["target"],
                "trusted": True,
                "state": "idle",
                "toolCount": 0,
            }
            assert {"read_file", "write_file"} <= {t["name"] for t in before["tools"]}
            assert not marker.exists()

            started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
            session_id = started["sessionId"]
            answer = await client.request(
                methods.SEND_MESSAGE, {"sessionId": session_id, "text": "say hi"}
            )
            assert answer["stopReason"] == "stop" and answer["text"] == "It said hi."
            # asked to trust the project's server, then to run its tool
            assert [a["toolId"] for a in client.approvals] == ["mcp:probe", "mcp__probe__echo"]
            assert client.approvals[0]["action"] == "process"
            assert "probe_server.py" in client.approvals[0]["preview"]["command"]
            assert marker.exists()
            # ordinary cards: every call has its tool_call and tool_result
            calls = client.events_of(session_id, "agent:tool_call")
            results = client.events_of(session_id, "agent:tool_result")
            assert [c["toolId"] for c in calls] == ["mcp:probe", "mcp__probe__echo"]
            assert [r["callId"] for r in results] == [c["callId"] for c in calls]
            assert results[1]["success"] and results[1]["outputSummary"] == "hi"
            offered = {tool["function"]["name"] for tool in model.requests[0].json()["tools"]}
            assert {"mcp__probe__echo", "mcp__time__get_current_time"} <= offered

            after = await client.request(methods.LIST_TOOLS, {"sessionId": session_id})
            servers = {server["name"]: server for server in after["servers"]}
            assert servers["probe"]["trusted"] is True and servers["probe"]["state"] == "running"
            assert servers["time"]["state"] == "running"  # started for the turn
            probe_tools = [t for t in after["tools"] if t.get("server") == "probe"]
            echo = next(t for t in probe_tools if t["serverTool"] == "echo")
            assert echo["name"] == "mcp__probe__echo" and echo["readOnly"] is True
            assert echo["source"] == "mcp"

            with pytest.raises(JsonRpcInvalidParams):
                await client.request(methods.LIST_TOOLS, {"start": [True]})


async def test_acp_mcp_servers_are_honoured_for_the_session(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    client = RecordingClient(decision="allow-once")
    server = McpServerStdio(
        name="Probe Tools",
        command=sys.executable,
        args=[str(PROBE_SERVER)],
        env=[EnvVariable(name="PROBE_TOKEN", value="client-env-value-123456")],
    )
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(tool_calls=[echo_call("call-1", "mcp__probe-tools__echo", "from acp")]),
            openai_stream(text=["Echoed."]),
            openai_stream(text=["Reviewed."]),
            openai_stream(text=["No tools here."]),
        )
        async with spawn_acp(home, client, fs=True) as (conn, answer):
            capabilities = answer.agent_capabilities
            assert capabilities is not None and capabilities.mcp_capabilities is not None
            assert capabilities.mcp_capabilities.http is True
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[server])).session_id
            result = await conn.prompt(session_id=sid, prompt=[{"type": "text", "text": "echo"}])
            assert result.stop_reason == "end_turn"
            offered = {tool["function"]["name"] for tool in model.requests[0].json()["tools"]}
            assert "mcp__probe-tools__echo" in offered  # no agent entry needed
            [asked] = client.permissions
            assert asked.tool_call.tool_call_id == "call-1"
            [start] = [e for e in client.tool_events(sid, "call-1") if isinstance(e, ToolCallStart)]
            assert start.title == "MCP probe-tools: echo"
            assert client.message_text(sid).endswith("Echoed.")
            tool_message = model.requests[1].json()["messages"][-1]
            assert tool_message["role"] == "tool" and tool_message["content"] == "from acp"

            # the running server's prompts became slash commands
            commands = client.updates_of(sid, AvailableCommandsUpdate)[-1].available_commands
            review = next(c for c in commands if c.name == "mcp__probe-tools__review")
            assert review.input is not None and review.input.root.hint == "topic"
            assert {"compact", "title", "usage", "model"} <= {c.name for c in commands}
            missing = await conn.prompt(
                session_id=sid, prompt=[{"type": "text", "text": "/mcp__probe-tools__review"}]
            )
            assert missing.stop_reason == "end_turn"
            assert client.message_text(sid).endswith(
                "/mcp__probe-tools__review failed: missing topic"
            )
            assert len(model.requests) == 2  # no turn for that
            await conn.prompt(
                session_id=sid,
                prompt=[{"type": "text", "text": "/mcp__probe-tools__review the parser"}],
            )
            sent = model.requests[2].json()["messages"][-1]
            assert sent == {"role": "user", "content": "Please review the parser carefully."}

            # another session without mcpServers does not see them
            other = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            await conn.prompt(session_id=other, prompt=[{"type": "text", "text": "hi"}])
            offered = {tool["function"]["name"] for tool in model.requests[3].json()["tools"]}
            assert not any(name.startswith("mcp__") for name in offered)
    logs = list((home / ".relavium" / "logs").glob("*.log*"))
    assert logs, "the agent writes a log"
    assert all("client-env-value-123456" not in path.read_text() for path in logs)
