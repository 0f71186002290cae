"""Introspection checkpoints over the real server (issue 23, seed 002)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import configure_loopback_provider, editor, make_git_workspace
from tests.unit.llm.wire_servers import LoopbackServer, openai_stream


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    return make_git_workspace(tmp_path / "repo"), tmp_path / "home"


async def test_checkpoints_update_description_memory_and_exports(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(text=["add() subtracts."]),
            openai_stream(
                text=["DESCRIPTION: Fixing add() in app.py\n", "MEMORY:\n- add() subtracts"]
            ),
            openai_stream(text=["Fixed."]),
            openai_stream(text=["Off-format notes only"]),
        )
        async with editor(workspace, home) as client:
            session = (await client.request(methods.START_SESSION, {"agentRef": "coder"}))[
                "sessionId"
            ]
            await client.request(
                methods.SEND_MESSAGE, {"sessionId": session, "text": "What is wrong in app.py?"}
            )
            first = await client.request(methods.CHECKPOINT_SESSION, {"sessionId": session})
            assert first["type"] == "session:checkpoint"
            assert first["reason"] == "manual"
            assert first["description"] == "Fixing add() in app.py"
            assert first["workingMemory"] == "- add() subtracts"
            assert first["throughSequence"] == 2
            asked = model.requests[1].json()
            assert "What is wrong in app.py?" in json.dumps(asked["messages"])
            assert client.events_of(session, "session:checkpoint")[0]["description"] == (
                "Fixing add() in app.py"
            )
            resumed = await client.request(methods.RESUME_SESSION, {"sessionId": session})
            assert resumed["session"]["description"] == "Fixing add() in app.py"
            assert resumed["session"]["descriptionSource"] == "introspection"

            # The next turn is given the working memory.
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "Fix it."})
            system = json.dumps(model.requests[2].json()["messages"][0])
            assert "add() subtracts" in system and "working memory" in system

            # A second checkpoint reads only what came after the first; off-format is kept.
            second = await client.request(
                methods.CHECKPOINT_SESSION, {"sessionId": session, "reason": "turn_limit"}
            )
            later = json.dumps(model.requests[3].json()["messages"])
            assert "Fix it." in later and "What is wrong in app.py?" not in later
            assert second["reason"] == "turn_limit"
            assert second["description"] == "Off-format notes only"
            listed = await client.request(methods.LIST_INTROSPECTIONS, {"sessionId": session})
            assert [c["reason"] for c in listed["checkpoints"]] == ["manual", "turn_limit"]

            exported = await client.request(
                methods.EXPORT_SESSION, {"sessionId": session, "open": False}
            )
            document = YAML(typ="safe").load(exported["content"])
            carried = document["metadata"]["relaviumExport"]["checkpoints"]
            assert [c["description"] for c in carried] == [
                "Fixing add() in app.py",
                "Off-format notes only",
            ]
            jsonl = await client.request(
                methods.EXPORT_SESSION, {"sessionId": session, "format": "jsonl", "open": False}
            )
            records = [json.loads(line) for line in jsonl["content"].splitlines()]
            assert [r["reason"] for r in records if r["record"] == "checkpoint"] == [
                "manual",
                "turn_limit",
            ]
            with pytest.raises(Exception, match="reason"):
                await client.request(
                    methods.CHECKPOINT_SESSION, {"sessionId": session, "reason": "whenever"}
                )


async def test_a_checkpoint_works_on_the_offline_model(setup: tuple[Path, Path]) -> None:
    workspace, home = setup
    async with editor(workspace, home) as client:
        session = (await client.request(methods.START_SESSION, {"agentRef": "relavium-default"}))[
            "sessionId"
        ]
        await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "hello"})
        checkpoint = await client.request(methods.CHECKPOINT_SESSION, {"sessionId": session})
        assert checkpoint["description"]
        resumed = await client.request(methods.RESUME_SESSION, {"sessionId": session})
        assert resumed["session"]["descriptionSource"] == "introspection"
