"""Delegation over the real server (issue 23): a parent agent hands a task to a child session.

Parent and child both run on the loopback provider (one scripted OpenAI-compatible server;
their calls are sequential, so one script serves both). The scenario: a completed
delegation, a delegation aborted mid-child through the parent, both sessions resumed after
a server restart, and the parent's export with the child as a sub-workflow step.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from relavium_lsp.export.workflow_yaml import parse_workflow, serialize_workflow
from relavium_lsp.server import methods
from tests.e2e.lsp_harness import (
    EditorClient,
    configure_loopback_provider,
    editor,
    make_git_workspace,
)
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream


def _delegate(call_id: str, task: str) -> ScriptedToolCall:
    arguments = json.dumps({"agent": "coder", "task": task, "reason": "coder knows the code"})
    return ScriptedToolCall(call_id, "delegate", arguments)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    return workspace, home


def _add_lead_agent(workspace: Path) -> None:
    (workspace / ".relavium" / "agents" / "lead.agent.yaml").write_text(
        "id: lead\nname: Lead\ndescription: plans and delegates\n"
        "model: gpt-4o-mini\nprovider: loop\n"
        'system_prompt: "You lead."\n'
        "tools: [delegate]\n",
        encoding="utf-8",
    )


async def _session(client: EditorClient, session_id: str) -> dict[str, object]:
    resumed = await client.request(methods.RESUME_SESSION, {"sessionId": session_id})
    return dict(resumed["session"])


async def test_delegate_abort_restart_and_export(setup: tuple[Path, Path]) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        _add_lead_agent(workspace)
        model.script(
            # 1. lead asks coder; coder answers; lead wraps up.
            openai_stream(tool_calls=[_delegate("d1", "Name the function in app.py.")]),
            openai_stream(text=["It is ", "add."], usage=(30, 4)),
            openai_stream(text=["The coder says: add."]),
            # 2. lead asks again; the child stalls mid-answer and the parent is aborted.
            openai_stream(tool_calls=[_delegate("d2", "Explain app.py at length.")]),
            openai_stream(text=["Once ", "upon "], ending="stall"),
        )
        async with editor(workspace, home) as client:
            parent = (await client.request(methods.START_SESSION, {"agentRef": "lead"}))[
                "sessionId"
            ]
            done = await client.request(
                methods.SEND_MESSAGE, {"sessionId": parent, "text": "What does app.py define?"}
            )
            assert done["stopReason"] == "stop"
            assert done["text"] == "The coder says: add."

            listed = await client.request(methods.LIST_SESSIONS, {})
            children = [s for s in listed["sessions"] if s.get("parentSessionId") == parent]
            assert len(children) == 1
            child = children[0]["id"]
            assert children[0]["agentRef"] == "coder"

            transcript = await client.request(methods.GET_TRANSCRIPT, {"sessionId": parent})
            asked, result = transcript["messages"][1], transcript["messages"][2]
            assert asked["agentSlug"] == "lead"
            assert result["content"][0]["result"] == "It is add."
            child_messages = (await client.request(methods.GET_TRANSCRIPT, {"sessionId": child}))[
                "messages"
            ]
            assert child_messages[0]["role"] == "user"
            assert child_messages[0]["agentSlug"] == "lead"  # the task came from the lead
            assert child_messages[1]["agentSlug"] == "coder"

            handoffs = (await client.request(methods.LIST_HANDOFFS, {"sessionId": parent}))[
                "handoffs"
            ]
            assert [(h["fromAgent"], h["toAgent"], h["reason"]) for h in handoffs] == [
                ("lead", "coder", "coder knows the code")
            ]
            assert handoffs[0]["sequenceNumber"] == asked["sequenceNumber"]
            assert handoffs[0]["callId"] == "d1"
            assert handoffs[0]["childSessionId"] == child
            # Handoffs by agent (seed 004): into the coder, out of the lead, none the other way.
            for agent, direction, expected in (
                ("coder", "incoming", 1),
                ("coder", "outgoing", 0),
                ("lead", "outgoing", 1),
                ("lead", "incoming", 0),
                ("lead", "both", 1),
            ):
                found = await client.request(
                    methods.LIST_HANDOFFS,
                    {"sessionId": parent, "agent": agent, "direction": direction},
                )
                assert len(found["handoffs"]) == expected, (agent, direction)
            # The child was started by the lead's turn, not by a person (seed 002's source).
            parent_source = (await _session(client, parent))["source"]
            child_source = (await _session(client, child))["source"]
            assert isinstance(parent_source, dict) and parent_source["interactive"] is True
            assert child_source == {**parent_source, "interactive": False, "triggerId": parent}
            events = client.events_of(parent, "agent:handoff")
            assert [e["returned"] for e in events] == [False, True]
            assert events[1]["stopReason"] == "stop"
            # The parent waited for its peer while the child ran.
            statuses = [e for e in client.events_of(child, "session:turn_started")]
            assert statuses

            # 2. Abort the parent while its second child is answering.
            turn = asyncio.ensure_future(
                client.request(methods.SEND_MESSAGE, {"sessionId": parent, "text": "More?"})
            )
            await client.wait_until(
                lambda: (
                    len(
                        [
                            s
                            for s in client.events
                            if s["type"] == "agent:token" and s["sessionId"] not in (parent, child)
                        ]
                    )
                    > 0
                ),
                "the second child streams",
            )
            second_child = next(
                e["childSessionId"] for e in client.events_of(parent, "agent:handoff")[2:]
            )
            running = await client.request(methods.LIST_SESSIONS, {})
            states = {s["id"]: s["status"] for s in running["sessions"]}
            assert states[parent] == "awaiting_peer"
            assert states[second_child] == "streaming"
            assert await client.request(methods.ABORT_TURN, {"sessionId": parent}) == {
                "aborted": True
            }
            assert (await turn)["stopReason"] == "aborted"
            await client.wait_for_event(second_child, "session:turn_completed")
            completed = client.events_of(second_child, "session:turn_completed")
            assert completed[-1]["stopReason"] == "aborted"
            assert await model.wait_for_disconnect(4)
            after = await client.request(methods.LIST_SESSIONS, {})
            states = {s["id"]: s["status"] for s in after["sessions"]}
            assert states[parent] == "idle" and states[second_child] == "idle"

    # 3. A restart: both sessions resume and carry on.
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(text=["parent again"]), openai_stream(text=["child again"]))
        async with editor(workspace, home) as client:
            for session_id, text in ((parent, "parent again"), (second_child, "child again")):
                resumed = await _session(client, session_id)
                assert resumed["status"] == "idle"
                answer = await client.request(
                    methods.SEND_MESSAGE, {"sessionId": session_id, "text": "still there?"}
                )
                assert answer["text"] == text
            assert (await _session(client, second_child))["parentSessionId"] == parent

            # 4. The parent's export holds its children as sub-workflow steps.
            exported = await client.request(
                methods.EXPORT_SESSION, {"sessionId": parent, "open": False}
            )
            document = YAML(typ="safe").load(exported["content"])
            ids = [node["id"] for node in document["nodes"]]
            assert ids[:3] == ["input", "turn-1", "turn-1-delegate-1"]
            step = document["nodes"][2]
            assert step["agent_ref"] == "coder"
            assert step["prompt_template"] == "Name the function in app.py."
            assert {agent["id"] for agent in document["agents"]} == {"lead", "coder"}
            exported_children = document["metadata"]["relaviumExport"]["children"]
            assert [c["sessionId"] for c in exported_children] == [child, second_child]
            assert exported_children[0]["messages"][1]["content"][0]["text"] == "It is add."
            jsonl = await client.request(
                methods.EXPORT_SESSION, {"sessionId": parent, "format": "jsonl", "open": False}
            )
            records = [json.loads(line) for line in jsonl["content"].splitlines()]
            handoff_records = [r for r in records if r["record"] == "handoff"]
            assert [(r["toAgent"], r["childSessionId"]) for r in handoff_records] == [
                ("coder", child),
                ("coder", second_child),
            ]
            answers = [r for r in records if r["record"] == "message" and r["role"] == "assistant"]
            assert all(r["agentSlug"] == "lead" and r["tokenUsage"] for r in answers)
            # The scaffold stays a valid, byte-stable workflow document.
            parsed = parse_workflow(exported["content"])
            assert serialize_workflow(parsed) == exported["content"]
