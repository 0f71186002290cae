"""The session model over the real server: details, per-message usage, threading, statuses,
fork lineage (issue 23)."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from ruamel.yaml import YAML

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


async def test_minor_fixes_over_the_server(setup: tuple[Path, Path]) -> None:
    """turn_limit's lastSequence, short manual trims, aborted turns in exports, the default
    agent's model in listAgents, and transliterated workflow ids."""
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        (workspace / ".relavium" / "project.toml").write_text(
            "[chat]\nmax_turns = 2\n", encoding="utf-8"
        )
        model.script(
            openai_stream(text=["fine"]),
            openai_stream(text=["slow ", "story "], ending="stall"),
        )
        async with editor(workspace, home) as client:
            agents = await client.request(methods.LIST_AGENTS)
            default = next(a for a in agents["agents"] if a["id"] == "relavium-default")
            assert default["model"] and default["provider"]

            started = await client.request(
                methods.START_SESSION, {"agentRef": "coder", "title": "Straße für Ärger"}
            )
            session = started["sessionId"]
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "hi"})
            trimmed = await client.request(
                methods.COMPACT_SESSION, {"sessionId": session, "mode": "trim"}
            )
            assert trimmed["messagesAfter"] == trimmed["messagesBefore"] == 2
            assert (await _summary(client, session))["messageCount"] == 2

            running = client.request(
                methods.SEND_MESSAGE, {"sessionId": session, "text": "tell a story"}
            )
            tokens_so_far = len(client.events_of(session, "agent:token"))
            turn = asyncio.ensure_future(running)
            await client.wait_for_event(session, "agent:token", count=tokens_so_far + 1)
            await client.request(methods.ABORT_TURN, {"sessionId": session})
            assert (await turn)["stopReason"] == "aborted"
            assert (await _summary(client, session))["status"] == "idle"

            refused = await client.request(
                methods.SEND_MESSAGE, {"sessionId": session, "text": "one more"}
            )
            assert refused["error"]["code"] == "turn_limit"
            assert refused["lastSequence"] == 2

            jsonl = await client.request(
                methods.EXPORT_SESSION, {"sessionId": session, "format": "jsonl", "open": False}
            )
            records = [json.loads(line) for line in jsonl["content"].splitlines()]
            rolled = [r for r in records if r["record"] == "rolled-back-turn"]
            assert len(rolled) == 1
            assert rolled[0]["userMessageSequence"] == 3
            assert rolled[0]["stopReason"] == "aborted"
            assert rolled[0]["messages"][0]["content"][0]["text"] == "tell a story"
            assert records[-1] == {"record": "session-close", "messageCount": 2, "turnCount": 2}

            workflow = await client.request(
                methods.EXPORT_SESSION, {"sessionId": session, "open": False}
            )
            assert workflow["suggestedPath"].endswith("strasse-fur-arger.relavium.yaml")
            document = YAML(typ="safe").load(workflow["content"])
            export = document["metadata"]["relaviumExport"]
            assert [t["stopReason"] for t in export["rolledBackTurns"]] == ["aborted"]
            assert [n["id"] for n in document["nodes"]] == ["input", "turn-1", "output"]

            imported = await client.request(
                methods.EXPORT_SESSION, {"sessionId": session, "format": "jsonl", "open": False}
            )
            assert imported["content"] == jsonl["content"]  # byte-stable


_PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"pixel" * 20).decode()


async def test_notes_artifacts_restore_and_purge(setup: tuple[Path, Path]) -> None:
    workspace, home = setup
    (workspace / "big.txt").write_text(
        "".join(f"line {n} zanzibar\n" for n in range(3000)), encoding="utf-8"
    )
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(text=["noted"]),
            openai_stream(tool_calls=[ScriptedToolCall("c9", "read_file", '{"path": "big.txt"}')]),
            openai_stream(text=["a big file"]),
            openai_stream(text=["kept"]),
        )
        async with editor(workspace, home) as client:
            session = (await client.request(methods.START_SESSION, {"agentRef": "coder"}))[
                "sessionId"
            ]
            note = await client.request(
                methods.APPEND_MESSAGE,
                {"sessionId": session, "text": "Remember: the tests use pytest."},
            )
            assert note["message"]["role"] == "user"
            await client.wait_for_event(session, "session:message_appended")
            record = await client.request(
                methods.APPEND_MESSAGE,
                {"sessionId": session, "role": "system", "text": "Reviewed by Ada."},
            )
            assert record["message"]["sequenceNumber"] == 2
            assert model.requests == []  # no model call
            with pytest.raises(JsonRpcException) as empty:
                await client.request(methods.APPEND_MESSAGE, {"sessionId": session, "text": ""})
            assert empty.value.code == -32602

            await client.request(
                methods.SEND_MESSAGE,
                {
                    "sessionId": session,
                    "text": "ok?",
                    "attachments": [
                        {
                            "type": "media",
                            "mimeType": "image/png",
                            "source": {"kind": "base64", "data": _PNG},
                        }
                    ],
                },
            )
            sent = json.dumps(model.requests[0].json()["messages"])
            assert "the tests use pytest" in sent  # a user note is context for the model
            assert "Reviewed by Ada" not in sent  # a system note is for the record only
            resumed = await client.request(methods.RESUME_SESSION, {"sessionId": session})
            assert resumed["session"]["turnCount"] == 1  # notes are not turns

            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "read it"})
            artifacts = (await client.request(methods.LIST_ARTIFACTS, {"sessionId": session}))[
                "artifacts"
            ]
            assert len(artifacts) == 1
            assert artifacts[0]["callId"] == "c9" and artifacts[0]["toolName"] == "read_file"
            assert artifacts[0]["lines"] >= 3000

            other = (await client.request(methods.START_SESSION, {"agentRef": "coder"}))[
                "sessionId"
            ]
            await client.request(methods.SEND_MESSAGE, {"sessionId": other, "text": "zanzibar?"})

            await client.request(methods.DELETE_SESSION, {"sessionId": session})
            live = await client.request(methods.LIST_SESSIONS, {})
            assert session not in [s["id"] for s in live["sessions"]]
            deleted = await client.request(methods.LIST_SESSIONS, {"deleted": True})
            assert [s["id"] for s in deleted["sessions"]] == [session]
            assert deleted["sessions"][0]["deletedAt"]
            restored = await client.request(methods.RESTORE_SESSION, {"sessionId": session})
            assert "deletedAt" not in restored["session"]
            assert (await client.request(methods.LIST_SESSIONS, {"deleted": True}))[
                "sessions"
            ] == []
            with pytest.raises(JsonRpcException):
                await client.request(methods.RESTORE_SESSION, {"sessionId": session})

            media = sorted((home / ".relavium" / "media").rglob("*"))
            blobs = [path for path in media if path.is_file()]
            assert len(blobs) == 1
            found = await client.request(methods.LIST_SESSIONS, {"query": "zanzibar"})
            assert {s["id"] for s in found["sessions"]} == {session, other}

            purged = await client.request(methods.PURGE_SESSION, {"sessionId": session})
            assert purged == {"sessions": 1, "messages": 8, "mediaFiles": 1}
            assert not blobs[0].exists()
            found = await client.request(methods.LIST_SESSIONS, {"query": "zanzibar"})
            assert [s["id"] for s in found["sessions"]] == [other]
            for listing in ({}, {"deleted": True}):
                listed = await client.request(methods.LIST_SESSIONS, listing)
                assert session not in [s["id"] for s in listed["sessions"]]
            with pytest.raises(JsonRpcException):
                await client.request(methods.GET_TRANSCRIPT, {"sessionId": session})
