"""The session model over the real server: details, per-message usage, threading, statuses,
fork lineage (issue 23)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import (
    EditorClient,
    configure_loopback_provider,
    editor,
    make_git_workspace,
)
from tests.unit.llm.wire_servers import (
    LoopbackServer,
    ScriptedToolCall,
    openai_error,
    openai_stream,
)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    workspace = make_git_workspace(tmp_path / "repo")
    return workspace, tmp_path / "home"


async def _summary(client: EditorClient, session_id: str, **params: Any) -> dict[str, Any]:
    listed = await client.request(methods.LIST_SESSIONS, params)
    return next(s for s in listed["sessions"] if s["id"] == session_id)


async def test_details_usage_threading_failure_and_fork(setup: tuple[Path, Path]) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(
                tool_calls=[ScriptedToolCall("c1", "list_directory", '{"path": "."}')],
                usage=(40, 5),
            ),
            openai_stream(text=["app.py ", "only"], usage=(60, 3)),
            openai_error(400, "bad request"),
        )
        async with editor(workspace, home) as client:
            started = await client.request(
                methods.START_SESSION,
                {
                    "agentRef": "coder",
                    "description": "Look around the repo",
                    "metadata": {"pinned": True},
                },
            )
            session = started["sessionId"]
            with pytest.raises(JsonRpcException) as too_big:
                await client.request(
                    methods.START_SESSION, {"agentRef": "coder", "metadata": {"x": "y" * 20000}}
                )
            assert too_big.value.code == -32602
            assert "metadata" in str(too_big.value)

            done = await client.request(
                methods.SEND_MESSAGE, {"sessionId": session, "text": "what is here?"}
            )
            assert done["text"] == "app.py only"
            transcript = await client.request(methods.GET_TRANSCRIPT, {"sessionId": session})
            user, asked, result, answer = transcript["messages"]
            assert "parentMessageId" not in user
            assert asked["parentMessageId"] == user["id"]
            assert result["parentMessageId"] == asked["id"]
            assert answer["parentMessageId"] == result["id"]
            assert asked["tokenUsage"] == {
                "inputTokens": 40,
                "outputTokens": 5,
                "cacheReadTokens": 0,
                "cacheWriteTokens": 0,
            }
            assert answer["tokenUsage"]["inputTokens"] == 60
            assert asked["costMicrocents"] > 0 and answer["costMicrocents"] > 0
            resumed = await client.request(methods.RESUME_SESSION, {"sessionId": session})
            totals = resumed["session"]["totals"]
            assert totals["costMicrocents"] == asked["costMicrocents"] + answer["costMicrocents"]
            assert resumed["session"]["description"] == "Look around the repo"
            assert resumed["session"]["descriptionSource"] == "user"
            assert resumed["session"]["metadata"] == {"pinned": True}

            updated = await client.request(
                methods.UPDATE_SESSION,
                {"sessionId": session, "description": "Repo tour", "metadata": {"tab": 2}},
            )
            assert updated["session"]["description"] == "Repo tour"
            assert updated["session"]["metadata"] == {"tab": 2}
            cleared = await client.request(
                methods.UPDATE_SESSION, {"sessionId": session, "metadata": None}
            )
            assert "metadata" not in cleared["session"]
            assert cleared["session"]["description"] == "Repo tour"  # absent: kept
            summary = await _summary(client, session)
            assert summary["description"] == "Repo tour"

            failed = await client.request(
                methods.SEND_MESSAGE, {"sessionId": session, "text": "and now?"}
            )
            assert failed["stopReason"] == "error"
            assert (await _summary(client, session))["status"] == "failed"
            listed = await client.request(methods.LIST_SESSIONS, {"status": "failed"})
            assert [s["id"] for s in listed["sessions"]] == [session]

            forked = await client.request(
                methods.FORK_SESSION, {"sessionId": session, "atSequence": asked["sequenceNumber"]}
            )
            fork = await client.request(methods.RESUME_SESSION, {"sessionId": forked["sessionId"]})
            assert fork["session"]["forkedFrom"] == {
                "sessionId": session,
                "messageId": asked["id"],
                "sequenceNumber": asked["sequenceNumber"],
            }
            assert fork["session"]["status"] == "idle"
