"""The chat UI's requests over a real server: the model picker and a code block's Apply."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import configure_loopback_provider, editor, make_git_workspace
from tests.unit.llm.wire_servers import LoopbackServer, openai_stream


def _second_agent(workspace: Path) -> None:
    """Another agent on the same provider: its model becomes a choice of every session."""
    (workspace / ".relavium" / "agents" / "reviewer.agent.yaml").write_text(
        "id: reviewer\nname: Reviewer\ndescription: reviews\nmodel: gpt-4.1\nprovider: loop\n"
        'system_prompt: "Review."\ntools: []\n',
        encoding="utf-8",
    )


async def test_switching_the_model_applies_from_the_next_turn(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        _second_agent(workspace)
        model.script(openai_stream(text=["first"]), openai_stream(text=["second"]))
        async with editor(workspace, home) as client:
            started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
            session = started["sessionId"]
            listed = await client.request(methods.SESSION_MODELS, {"sessionId": session})
            assert listed["current"]["id"] == "loop/gpt-4o-mini"
            ids = [choice["id"] for choice in listed["choices"]]
            assert ids[0] == "loop/gpt-4o-mini" and "loop/gpt-4.1" in ids
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "one"})
            switched = await client.request(
                methods.SET_MODEL, {"sessionId": session, "model": "loop/gpt-4.1"}
            )
            assert switched["current"] == {
                "id": "loop/gpt-4.1",
                "provider": "loop",
                "model": "gpt-4.1",
            }
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "two"})
            with pytest.raises(JsonRpcException) as unknown:
                await client.request(methods.SET_MODEL, {"sessionId": session, "model": "x/y"})
            with pytest.raises(JsonRpcException) as malformed:
                await client.request(methods.SET_MODEL, {"sessionId": session})
            transcript = await client.request(methods.GET_TRANSCRIPT, {"sessionId": session})
            resumed = await client.request(methods.RESUME_SESSION, {"sessionId": session})
    asked = [request.json()["model"] for request in model.requests]
    assert asked == ["gpt-4o-mini", "gpt-4.1"]
    # The transcript records which model answered each turn.
    answers = [m["modelId"] for m in transcript["messages"] if m["role"] == "assistant"]
    assert answers == ["gpt-4o-mini", "gpt-4.1"]
    assert resumed["session"]["modelId"] == "gpt-4.1"
    assert "unknown model" in str(unknown.value)
    assert malformed.value.code == -32602


async def test_the_chosen_model_survives_a_restart_and_reaches_another_window(
    tmp_path: Path,
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        _second_agent(workspace)
        model.script(*(openai_stream(text=[f"answer {n}"]) for n in range(3)))
        async with editor(workspace, home) as first:
            started = await first.request(methods.START_SESSION, {"agentRef": "coder"})
            session = started["sessionId"]
            await first.request(methods.SET_MODEL, {"sessionId": session, "model": "loop/gpt-4.1"})

        # A restarted server: the switch is kept with the session.
        async with editor(workspace, home) as restarted:
            current = await restarted.request(methods.SESSION_MODELS, {"sessionId": session})
            assert current["current"]["id"] == "loop/gpt-4.1"
            resumed = await restarted.request(methods.RESUME_SESSION, {"sessionId": session})
            assert resumed["session"]["modelId"] == "gpt-4.1"
            await restarted.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "one"})

        # Two windows at once: one switches back, the other follows when it opens the session.
        async with editor(workspace, home) as left, editor(workspace, home) as right:
            await left.request(methods.RESUME_SESSION, {"sessionId": session})
            await right.request(
                methods.SET_MODEL, {"sessionId": session, "model": "loop/gpt-4o-mini"}
            )
            reopened = await left.request(methods.RESUME_SESSION, {"sessionId": session})
            assert reopened["session"]["modelId"] == "gpt-4o-mini"
            await left.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "two"})
            await right.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "three"})
    asked = [request.json()["model"] for request in model.requests]
    assert asked == ["gpt-4.1", "gpt-4o-mini", "gpt-4o-mini"]


async def test_apply_code_writes_through_the_approval_as_an_undoable_edit(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        async with editor(workspace, home) as client:
            started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
            session = started["sessionId"]
            applied = await client.request(
                methods.APPLY_CODE,
                {"sessionId": session, "path": "app.py", "content": "print('fixed')\n"},
            )
            client.decision = "reject"
            refused = await client.request(
                methods.APPLY_CODE, {"sessionId": session, "path": "app.py", "content": "no\n"}
            )
            escaped = await client.request(
                methods.APPLY_CODE, {"sessionId": session, "path": "../outside.py", "content": "x"}
            )
            with pytest.raises(JsonRpcException) as malformed:
                await client.request(methods.APPLY_CODE, {"sessionId": session, "path": ""})
            record = await client.request(methods.RESUME_SESSION, {"sessionId": session})
            tool_events = await client.request(
                methods.SESSION_EVENTS,
                {"sessionId": session, "afterSequence": 0, "types": ["agent:tool_result"]},
            )
            results = client.events_of(session, "agent:tool_result")
    assert applied["applied"] is True and applied["callId"].startswith("apply_")
    assert (workspace / "app.py").read_text() == "print('fixed')\n"
    assert [approval["preview"]["path"] for approval in client.approvals] == ["app.py", "app.py"]
    assert len(client.edits) == 1  # through workspace/applyEdit: the editor can undo it
    assert refused["applied"] is False
    assert [r["callId"] for r in results[:2]] == [applied["callId"], refused["callId"]]
    assert results[1]["errorCode"] == "tool_denied"
    assert record["session"]["status"] == "idle"
    # The session's jail holds: a path outside the workspace is refused before any approval.
    assert escaped["applied"] is False and len(client.approvals) == 2
    assert not (tmp_path / "outside.py").exists()
    assert malformed.value.code == -32602
    assert model.requests == []  # no model was asked
    # The log filtered by type: exactly the three calls' results, nothing else.
    assert [e["type"] for e in tool_events["events"]] == ["agent:tool_result"] * 3
