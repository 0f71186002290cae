"""update_plan reaches an ACP client as the stable ``plan`` update, live and after a resume."""

from __future__ import annotations

import json
from pathlib import Path

from acp.schema import AgentPlanUpdate

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.unit.acp.acp_client import RecordingClient, connect_in_process
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

PLAN = [
    {"content": "Read app.py", "status": "completed"},
    {"content": "Fix add()", "status": "in_progress", "priority": "high"},
]


def _plans(client: RecordingClient, session_id: str) -> list[AgentPlanUpdate]:
    return [u for sid, u in client.updates if sid == session_id and isinstance(u, AgentPlanUpdate)]


async def test_plan_updates_reach_the_client_and_come_back_on_load_and_resume(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_git_workspace(tmp_path / "repo", branch="main")
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        agent = workspace / ".relavium" / "agents" / "coder.agent.yaml"
        agent.write_text(agent.read_text().replace("tools: [", "tools: [update_plan, "))
        model.script(
            openai_stream(
                tool_calls=[
                    ScriptedToolCall(
                        id="p1", name="update_plan", arguments=json.dumps({"plan": PLAN})
                    )
                ]
            ),
            openai_stream(text=["Planned."]),
        )
        client = RecordingClient()
        async with connect_in_process(client) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            result = await conn.prompt(session_id=sid, prompt=[{"type": "text", "text": "fix add"}])
            assert result.stop_reason == "end_turn"
            [live] = _plans(client, sid)
            assert live.session_update == "plan"
            assert [(e.content, e.status, e.priority) for e in live.entries] == [
                ("Read app.py", "completed", "medium"),
                ("Fix add()", "in_progress", "high"),
            ]
        for method in ("load", "resume"):
            later = RecordingClient()
            async with connect_in_process(later) as (conn, _):
                if method == "load":
                    await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
                else:
                    await conn.resume_session(cwd=str(workspace), session_id=sid)
                [again] = _plans(later, sid)
                assert again.entries == live.entries, method
