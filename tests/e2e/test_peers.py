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
from relavium_lsp.export.jsonl_import import import_jsonl
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


def _user_toml(home: Path, text: str) -> None:
    """Add to the user's own config.toml (a looser value is theirs to set, not a project's)."""
    path = home / ".relavium" / "config.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n" + text, encoding="utf-8")


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
        _user_toml(home, f'[chat]\nmax_cost_microcents = {cap}\non_exceed = "warn"\n')
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
    replayed = json.loads(output)
    assert replayed["turnsReplayed"] == 1

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
                assert audit[0]["detail"] == (
                    f"replayed 1 turns into {replayed['replaySessionId']}, 0 differences"
                )


async def test_handoff_input_filters(setup: tuple[Path, Path]) -> None:
    """What a child receives of its parent's chat: chosen per call over the agent's
    configuration, recorded in the handoff row, tool results stripped on request."""
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        _add_agent(workspace, "lead", "read_file, delegate")
        _user_toml(home, '[delegation.agents.lead]\ninput_filter = "full_history"\n')
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


def _message(call_id: str, to: str, text: str, *, await_reply: bool) -> ScriptedToolCall:
    arguments = json.dumps({"to": to, "text": text, "await_reply": await_reply})
    return ScriptedToolCall(call_id, "message_session", arguments)


async def test_sessions_talk_to_sessions(setup: tuple[Path, Path], tmp_path: Path) -> None:
    """Fire-and-forget and awaited peer messages with their delivery records, the sender
    awaiting_peer, an abort that cascades, and the safety refusals."""
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        _add_agent(workspace, "lead", "message_session")
        model.script(
            # B (lead) asks the coder's session and waits for the answer.
            openai_stream(
                tool_calls=[_message("m1", "coder", "What is in app.py?", await_reply=True)]
            ),
            openai_stream(text=["It defines add."]),  # A (coder) answers
            openai_stream(text=["The coder says: add."]),  # B wraps up
            # B asks again; A stalls mid-answer and B is aborted.
            openai_stream(
                tool_calls=[_message("m2", "coder", "Explain at length.", await_reply=True)]
            ),
            openai_stream(text=["Once ", "upon "], ending="stall"),
            # The editor sends one and waits for the reply.
            openai_stream(text=["pong"]),
        )
        async with editor(workspace, home) as client:
            coder = (await client.request(methods.START_SESSION, {"agentRef": "coder"}))[
                "sessionId"
            ]
            lead = (await client.request(methods.START_SESSION, {"agentRef": "lead"}))["sessionId"]

            # 1. Fire and forget, from the editor: the lead's session gets an attributed note.
            sent = (
                await client.request(
                    methods.SEND_PEER_MESSAGE,
                    {"sessionId": coder, "toSessionIds": [lead], "text": "FYI: tests are green."},
                )
            )["message"]
            assert (sent["mode"], sent["fromAgent"], sent["hops"]) == (
                "fire_and_forget",
                "coder",
                1,
            )
            [delivery] = sent["deliveries"]
            assert (delivery["toSessionId"], delivery["status"]) == (lead, "delivered")
            assert delivery["sequenceNumber"] == 1 and delivery["deliveredAt"]
            note = (await client.request(methods.GET_TRANSCRIPT, {"sessionId": lead}))["messages"][
                0
            ]
            assert (note["role"], note["agentSlug"]) == ("user", "coder")
            assert note["content"][0]["text"] == (
                f"Message from the coder agent (session {coder}):\n\nFYI: tests are green."
            )

            # 2. The lead's agent asks the coder's session (by agent id) and waits.
            done = await client.request(methods.SEND_MESSAGE, {"sessionId": lead, "text": "Ask"})
            assert done["text"] == "The coder says: add."
            lead_transcript = await client.request(methods.GET_TRANSCRIPT, {"sessionId": lead})
            result = lead_transcript["messages"][3]["content"][0]
            assert result["result"] == "It defines add." and not result.get("isError")
            asked = (await client.request(methods.GET_TRANSCRIPT, {"sessionId": coder}))["messages"]
            assert (asked[0]["role"], asked[0]["agentSlug"]) == ("user", "lead")
            assert "awaiting your reply:\n\nWhat is in app.py?" in asked[0]["content"][0]["text"]
            assert asked[1]["agentSlug"] == "coder"
            received = (
                await client.request(
                    methods.LIST_PEER_MESSAGES, {"sessionId": coder, "direction": "received"}
                )
            )["messages"]
            assert [(m["fromSessionId"], m["mode"], m["callId"]) for m in received] == [
                (lead, "await_reply", "m1")
            ]
            assert received[0]["deliveries"][0]["status"] == "replied"
            assert received[0]["deliveries"][0]["reply"] == "It defines add."
            assert received[0]["deliveries"][0]["sequenceNumber"] == asked[0]["sequenceNumber"]
            both = await client.request(methods.LIST_PEER_MESSAGES, {"sessionId": coder})
            assert len(both["messages"]) == 2  # the note it sent and the question it got

            # 3. An abort of the waiting sender cascades to the recipient's turn.
            turn = asyncio.ensure_future(
                client.request(methods.SEND_MESSAGE, {"sessionId": lead, "text": "More"})
            )
            tokens = len(client.events_of(coder, "agent:token"))
            await client.wait_for_event(coder, "agent:token", count=tokens + 1)
            states = {
                s["id"]: s["status"]
                for s in (await client.request(methods.LIST_SESSIONS, {}))["sessions"]
            }
            assert states[lead] == "awaiting_peer" and states[coder] == "streaming"
            # A busy recipient is not interrupted: the delivery waits until its turn settles.
            third = (await client.request(methods.START_SESSION, {"agentRef": "relavium-default"}))[
                "sessionId"
            ]
            busy = (
                await client.request(
                    methods.SEND_PEER_MESSAGE,
                    {"sessionId": third, "toSessionIds": [coder], "text": "psst"},
                )
            )["message"]["deliveries"][0]
            assert busy["status"] == "pending"
            with pytest.raises(JsonRpcException) as sender_busy:
                await client.request(
                    methods.SEND_PEER_MESSAGE,
                    {"sessionId": lead, "toSessionIds": [third], "text": "from a busy sender"},
                )
            assert "running a turn" in str(sender_busy.value)
            assert await client.request(methods.ABORT_TURN, {"sessionId": lead}) == {
                "aborted": True
            }
            assert (await turn)["stopReason"] == "aborted"
            await client.wait_until(
                lambda: any(
                    e["stopReason"] == "aborted"
                    for e in client.events_of(coder, "session:turn_completed")
                ),
                "the recipient's turn is aborted too",
            )
            assert await model.wait_for_disconnect(4)
            appended = await client.wait_for_event(coder, "session:message_appended")
            queued = (
                await client.request(
                    methods.LIST_PEER_MESSAGES, {"sessionId": third, "direction": "sent"}
                )
            )["messages"][0]["deliveries"][0]
            assert queued["status"] == "delivered"
            assert queued["sequenceNumber"] == appended["messageSequence"]
            coder_now = await client.request(methods.GET_TRANSCRIPT, {"sessionId": coder})
            assert coder_now["messages"][-1]["content"][0]["text"].endswith("psst")
            sent_by_lead = (
                await client.request(
                    methods.LIST_PEER_MESSAGES, {"sessionId": lead, "direction": "sent"}
                )
            )["messages"]
            assert [m["deliveries"][0]["status"] for m in sent_by_lead] == ["replied", "aborted"]
            states = {
                s["id"]: s["status"]
                for s in (await client.request(methods.LIST_SESSIONS, {}))["sessions"]
            }
            assert states[lead] == "idle" and states[coder] == "idle"

            # The editor can wait for a reply too.
            ponged = (
                await client.request(
                    methods.SEND_PEER_MESSAGE,
                    {
                        "sessionId": third,
                        "toSessionIds": [coder],
                        "text": "ping",
                        "mode": "await_reply",
                    },
                )
            )["message"]
            assert ponged["deliveries"][0]["status"] == "replied"
            assert ponged["deliveries"][0]["reply"] == "pong"
            statuses = await client.request(methods.LIST_SESSIONS, {})
            assert {s["id"]: s["status"] for s in statuses["sessions"]}[third] == "idle"

            # 4. Safety: one workspace only, size caps, no self-messages, one awaited recipient.
            elsewhere_dir = make_git_workspace(tmp_path / "other")
            elsewhere = (
                await client.request(
                    methods.START_SESSION,
                    {"agentRef": "relavium-default", "context": {"workingDir": str(elsewhere_dir)}},
                )
            )["sessionId"]
            with pytest.raises(JsonRpcException) as foreign:
                await client.request(
                    methods.SEND_PEER_MESSAGE,
                    {"sessionId": coder, "toSessionIds": [elsewhere], "text": "hi"},
                )
            assert "another workspace" in str(foreign.value)
            # The caps are the workspace's [peers] block (default 8,000 characters).
            for toml, length, cap in (
                ("", 8_001, "8000"),
                ("[peers]\nmax_message_chars = 20\n", 21, "20"),
            ):
                _project_toml(workspace, toml)
                with pytest.raises(JsonRpcException) as too_long:
                    await client.request(
                        methods.SEND_PEER_MESSAGE,
                        {"sessionId": coder, "toSessionIds": [lead], "text": "x" * length},
                    )
                assert f"at most {cap} characters" in str(too_long.value)
            for params, why in (
                ({"toSessionIds": [lead], "text": "x" * 100_001}, "100000"),
                ({"toSessionIds": [coder], "text": "me"}, "itself"),
                (
                    {"toSessionIds": [lead, elsewhere], "text": "q", "mode": "await_reply"},
                    "exactly one",
                ),
            ):
                with pytest.raises(JsonRpcException) as refused:
                    await client.request(methods.SEND_PEER_MESSAGE, {"sessionId": coder, **params})
                assert refused.value.code == -32602 and why in str(refused.value)

            # Purging a session erases what it sent and what it received.
            await client.request(methods.PURGE_SESSION, {"sessionId": coder})
            left = await client.request(methods.LIST_PEER_MESSAGES, {"sessionId": lead})
            assert [(m["fromSessionId"], m["deliveries"]) for m in left["messages"]] == [
                (lead, []),
                (lead, []),
            ]


async def test_peer_messages_are_passed_on_a_limited_number_of_times(
    setup: tuple[Path, Path],
) -> None:
    """a1 awaits a2, whose turn awaits a3, whose turn awaits a4: a4's turn may not send on."""
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        for agent in ("a1", "a2", "a3", "a4"):
            _add_agent(workspace, agent, "message_session")
        model.script(
            openai_stream(tool_calls=[_message("h1", "a2", "hop 1", await_reply=True)]),
            openai_stream(tool_calls=[_message("h2", "a3", "hop 2", await_reply=True)]),
            openai_stream(tool_calls=[_message("h3", "a4", "hop 3", await_reply=True)]),
            openai_stream(tool_calls=[_message("h4", "a1", "hop 4", await_reply=True)]),
            openai_stream(text=["a4 done"]),
            openai_stream(text=["a3 done"]),
            openai_stream(text=["a2 done"]),
            openai_stream(text=["a1 done"]),
        )
        async with editor(workspace, home) as client:
            sessions = {}
            for agent in ("a1", "a2", "a3", "a4"):
                started = await client.request(methods.START_SESSION, {"agentRef": agent})
                sessions[agent] = started["sessionId"]
            done = await client.request(
                methods.SEND_MESSAGE, {"sessionId": sessions["a1"], "text": "start the chain"}
            )
            assert done["text"] == "a1 done"
            last = await client.request(methods.GET_TRANSCRIPT, {"sessionId": sessions["a4"]})
            refused = last["messages"][2]["content"][0]
            assert refused["isError"] is True
            assert "at most 3 times" in refused["result"]
            sent = await client.request(methods.LIST_PEER_MESSAGES, {"sessionId": sessions["a4"]})
            assert [m["hops"] for m in sent["messages"]] == [3]  # only the one it received
            replies = []
            for agent in ("a1", "a2", "a3"):
                listed = await client.request(
                    methods.LIST_PEER_MESSAGES, {"sessionId": sessions[agent], "direction": "sent"}
                )
                [message] = listed["messages"]
                replies.append((message["hops"], message["deliveries"][0]["reply"]))
            assert replies == [(1, "a2 done"), (2, "a3 done"), (3, "a4 done")]

            # An export of a2 carries the message it received and the one it sent on.
            jsonl = await client.request(
                methods.EXPORT_SESSION,
                {"sessionId": sessions["a2"], "format": "jsonl", "open": False},
            )
            records = [json.loads(line) for line in jsonl["content"].splitlines()]
            carried = [
                (r["direction"], r["message"]["hops"], r["message"]["deliveries"][0]["status"])
                for r in records
                if r["record"] == "peer-message"
            ]
            assert carried == [("received", 1, "replied"), ("sent", 2, "replied")]
            exported = await client.request(
                methods.EXPORT_SESSION, {"sessionId": sessions["a2"], "open": False}
            )
            assert "peerMessages" in exported["content"]
            imported = import_jsonl(jsonl["content"]).messages  # still validates and imports
            assert len(imported) == records[-1]["messageCount"]
