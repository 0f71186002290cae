"""The LSP surface under stress: aborts, cancellation, concurrency, bad input, shutdown."""

from __future__ import annotations

import asyncio
import json
import random
import string
import uuid
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import (
    EditorClient,
    configure_loopback_provider,
    editor,
    make_git_workspace,
)
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream


async def _start(client: EditorClient, **extra: Any) -> str:
    started = await client.request(methods.START_SESSION, {"agentRef": "coder", **extra})
    return str(started["sessionId"])


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    workspace = make_git_workspace(tmp_path / "repo")
    return workspace, tmp_path / "home"


async def test_abort_by_request_and_by_cancel_request(setup: tuple[Path, Path]) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(text=["slow ", "story "], ending="stall"),
            openai_stream(text=["another ", "slow "], ending="stall"),
            openai_stream(text=["quick"]),
        )
        async with editor(workspace, home) as client:
            session = await _start(client)
            turn = asyncio.ensure_future(
                client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "story"})
            )
            await client.wait_for_event(session, "agent:token")
            aborted = await client.request(methods.ABORT_TURN, {"sessionId": session})
            assert aborted == {"aborted": True}
            result = await turn
            assert result["stopReason"] == "aborted"
            assert await model.wait_for_disconnect(0)

            tokens_so_far = len(client.events_of(session, "agent:token"))
            request_id = str(uuid.uuid4())
            pending = asyncio.ensure_future(
                client.lsp.protocol.send_request_async(
                    methods.SEND_MESSAGE, {"sessionId": session, "text": "again"}, msg_id=request_id
                )
            )
            await client.wait_for_event(session, "agent:token", count=tokens_so_far + 1)
            client.lsp.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))
            with pytest.raises(JsonRpcException) as cancelled:
                await pending
            assert cancelled.value.code == -32800
            await client.wait_for_event(session, "session:turn_completed", count=2)
            completed = client.events_of(session, "session:turn_completed")
            assert [c["stopReason"] for c in completed] == ["aborted", "aborted"]
            transcript = await client.request(methods.GET_TRANSCRIPT, {"sessionId": session})
            assert transcript["messages"] == []
            done = await client.request(
                methods.SEND_MESSAGE, {"sessionId": session, "text": "quick?"}
            )
            assert done["text"] == "quick"
            assert await client.request(methods.ABORT_TURN, {"sessionId": session}) == {
                "aborted": False
            }


async def test_cancel_session_and_two_sessions_without_crosstalk(setup: tuple[Path, Path]) -> None:
    workspace, home = setup
    with LoopbackServer(responder=None) as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(text=["a1 ", "a2 ", "a3"]), openai_stream(text=["b1 ", "b2 ", "b3"])
        )
        async with editor(workspace, home) as client:
            first, second = await _start(client), await _start(client)
            results = await asyncio.gather(
                client.request(methods.SEND_MESSAGE, {"sessionId": first, "text": "one"}),
                client.request(methods.SEND_MESSAGE, {"sessionId": second, "text": "two"}),
            )
            for session, result in zip((first, second), results, strict=True):
                streamed = "".join(e["token"] for e in client.events_of(session, "agent:token"))
                assert streamed == result["text"]
                seqs = [e["sequenceNumber"] for e in client.events_of(session)]
                assert seqs == list(range(1, len(seqs) + 1))
            assert {r["text"] for r in results} == {"a1 a2 a3", "b1 b2 b3"}
            assert await client.request(methods.CANCEL_SESSION, {"sessionId": first}) == {}
            assert client.events_of(first)[-1]["type"] == "session:cancelled"
            with pytest.raises(JsonRpcException) as ended:
                await client.request(methods.SEND_MESSAGE, {"sessionId": first, "text": "hello?"})
            assert ended.value.data == {"code": "session_ended"}


def _malformed_requests(session_id: str, count: int) -> list[tuple[str, Any]]:
    rng = random.Random(7)
    huge = "x" * 300_000
    shapes: list[tuple[str, Any]] = [
        (methods.START_SESSION, {"agentRef": 42}),
        (methods.START_SESSION, {"context": {"workingDir": "/definitely/not/here"}}),
        (methods.START_SESSION, {"context": {"fsScopeTier": "everything"}}),
        (methods.START_SESSION, {"agentRef": "no-such-agent"}),
        (methods.START_SESSION, {"unknownField": True}),
        (methods.START_SESSION, [1, 2, 3]),
        (methods.SEND_MESSAGE, {}),
        (methods.SEND_MESSAGE, {"sessionId": session_id}),
        (methods.SEND_MESSAGE, {"sessionId": session_id, "text": huge}),
        (methods.SEND_MESSAGE, {"sessionId": str(uuid.uuid4()), "text": "hi"}),
        (methods.SEND_MESSAGE, {"sessionId": session_id, "text": "  "}),
        (
            methods.SEND_MESSAGE,
            {"sessionId": session_id, "text": "x", "attachments": [{"type": "media"}]},
        ),
        (methods.GET_TRANSCRIPT, {"sessionId": session_id, "limit": -1}),
        (methods.GET_TRANSCRIPT, {"sessionId": "x" * 5000}),
        (methods.SESSION_EVENTS, {"sessionId": session_id, "afterSequence": "zero"}),
        (methods.LIST_SESSIONS, {"limit": 10**9}),
        (methods.LIST_SESSIONS, {"cursor": "not-a-cursor"}),
        (methods.LIST_SESSIONS, {"status": "exploded"}),
        (methods.RENAME_SESSION, {"sessionId": session_id, "title": ""}),
        (methods.DELETE_SESSION, {"sessionId": None}),
        (methods.COMPACT_SESSION, {"sessionId": session_id, "mode": "shred"}),
        (methods.RESUME_SESSION, {"sessionId": str(uuid.uuid4())}),
        (methods.ABORT_TURN, "not an object"),
        (methods.LIST_AGENTS, {"extra": 1}),
    ]
    requests = list(shapes)
    while len(requests) < count:
        method, params = rng.choice(shapes)
        if isinstance(params, dict) and rng.random() < 0.5:
            params = {
                **params,
                rng.choice(string.ascii_letters): rng.choice([None, 1.5, [], {}, "\u0000"]),
            }
        requests.append((method, params))
    return requests


async def test_a_thousand_malformed_requests_each_get_an_error(setup: tuple[Path, Path]) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(text=["still ", "alive"]))
        async with editor(workspace, home) as client:
            session = await _start(client)
            failures = await asyncio.gather(
                *(
                    client.request(method, params)
                    for method, params in _malformed_requests(session, 1000)
                ),
                return_exceptions=True,
            )
            assert len(failures) == 1000
            assert all(isinstance(failure, JsonRpcException) for failure in failures), [
                f for f in failures if not isinstance(f, JsonRpcException)
            ][:3]
            codes = {failure.code for failure in failures if isinstance(failure, JsonRpcException)}
            assert -32602 in codes  # InvalidParams for schema violations
            assert codes <= {-32602, -32001, -32004}, codes
            invalid = next(
                f for f in failures if isinstance(f, JsonRpcException) and f.code == -32602
            )
            assert "invalid params for relavium/" in str(invalid)
            alive = await client.request(
                methods.SEND_MESSAGE, {"sessionId": session, "text": "ok?"}
            )
            assert alive["text"] == "still alive"


async def test_shutdown_with_a_turn_in_flight_is_clean(setup: tuple[Path, Path]) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(text=["never ", "finishes"], ending="stall"))
        async with editor(workspace, home) as client:
            session = await _start(client)
            turn = asyncio.ensure_future(
                client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "go"})
            )
            await client.wait_for_event(session, "agent:token")
        # the editor shut the server down with the turn still streaming
        result = await asyncio.gather(turn, return_exceptions=True)
        assert result[0] is not None
        async with editor(workspace, home) as again:
            resumed = await again.request(methods.RESUME_SESSION, {"sessionId": session})
            assert resumed["session"]["status"] == "idle"
            assert (
                resumed["messages"] == []
            )  # the unfinished turn was rolled out, not left dangling
            backlog = await again.request(
                methods.SESSION_EVENTS, {"sessionId": session, "afterSequence": 0}
            )
            types_seen = [e["type"] for e in backlog["events"]]
            assert "session:turn_completed" in types_seen
            completed = [e for e in backlog["events"] if e["type"] == "session:turn_completed"]
            assert completed[-1]["stopReason"] == "aborted"


async def test_standard_fallbacks_refused_edits_commands_and_progress(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    write = ScriptedToolCall(
        id="w1", name="write_file", arguments=json.dumps({"path": "new.txt", "content": "hi"})
    )
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(tool_calls=[write]), openai_stream(text=["ok"]))
        async with editor(workspace, home, relavium={}) as client:
            asked: list[types.ShowMessageRequestParams] = []

            @client.lsp.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
            def answer(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
                asked.append(params)
                return types.MessageActionItem(title="Always allow for this session")

            client.apply_edits = False
            started = await client.lsp.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command="relavium.startSession", arguments=[{"agentRef": "coder"}]
                )
            )
            session = started["sessionId"]
            result = await client.request(
                methods.SEND_MESSAGE, {"sessionId": session, "text": "write"}
            )
            assert result["stopReason"] == "stop"
            assert [a.title for a in asked[0].actions or []] == [
                "Approve",
                "Reject",
                "Always allow for this session",
            ]
            assert not client.approvals  # the custom request was not declared, so not used
            assert len(client.edits) == 1 and not (workspace / "new.txt").exists()
            tool_result = client.events_of(session, "agent:tool_result")[0]
            assert tool_result["success"] is False
            assert tool_result["errorCode"] == "tool_failed"
            agents = await client.lsp.workspace_execute_command_async(
                types.ExecuteCommandParams(command="relavium.listAgents")
            )
            assert {a["id"] for a in agents["agents"]} >= {"coder", "relavium-default"}
            assert client.lsp.progress_reports, "a running turn reports work-done progress"


async def test_bad_initialization_options_warn_and_fall_back(setup: tuple[Path, Path]) -> None:
    workspace, home = setup
    options = {"clientName": 42, "approval": "whenever", "surprise": True}
    async with editor(workspace, home, initialization_options=options) as client:
        agents = await client.request(methods.LIST_AGENTS)
        assert any(agent["id"] == "relavium-default" for agent in agents["agents"])
        # The options are validated after `initialize` (cold start), but before any request
        # is dispatched: the warning precedes the answer on the same stream.
        warnings = [m for m in client.lsp.messages if m.type == types.MessageType.Warning]
        assert warnings and "initializationOptions" in warnings[0].message


async def test_context_without_editor_state_uses_the_last_touched_document(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "mod.py").write_text("x = 1\n", encoding="utf-8")
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        async with editor(workspace, home, relavium={}) as client:
            client.open_document(workspace / "app.py")
            client.open_document(workspace / "pkg" / "mod.py")
            started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
            context = started["context"]
            assert context["activeFile"] == "pkg/mod.py"
            assert "selection" not in context
            overridden = await client.request(
                methods.START_SESSION,
                {"agentRef": "coder", "context": {"activeFile": "app.py", "gitRef": "v9"}},
            )
            assert overridden["context"]["activeFile"] == "app.py"
            assert overridden["context"]["gitRef"] == "v9"
            assert overridden["context"]["workingDir"] == str(workspace)


async def test_the_editors_approval_setting_applies_and_a_project_cannot_loosen(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    (workspace / ".relavium").mkdir(exist_ok=True)
    (workspace / ".relavium" / "project.toml").write_text('[chat]\napproval = "never_ask"\n')
    write = ScriptedToolCall(
        id="w1", name="write_file", arguments=json.dumps({"path": "a.txt", "content": "1"})
    )
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(tool_calls=[write]), openai_stream(text=["asked"]))
        async with editor(workspace, home) as client:
            session = await _start(client)
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "write"})
            assert len(client.approvals) == 1  # the project's never_ask was ignored
        model.script(openai_stream(tool_calls=[write]), openai_stream(text=["not asked"]))
        async with editor(
            workspace, home, initialization_options={"approval": "never_ask"}
        ) as client:
            session = await _start(client)
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "write"})
            assert client.approvals == []  # the user's own editor setting allows it
            assert (workspace / "a.txt").read_text() == "1"
