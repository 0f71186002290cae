"""Workspace long-term memory over the real server (issue 23 item 4, seed 002; §2.6).

Real ``relavium-lsp serve`` processes, a real SQLCipher file under ``home``, a loopback
OpenAI-compatible provider (what the model receives is checked on its side) and the bundled
offline model.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import configure_loopback_provider, editor, make_git_workspace
from tests.unit.llm.wire_servers import LoopbackServer, openai_stream

NOTES = "## Build\n- run `make test` before committing\n- the marker word is quokka-42\n"
# Shaped like a provider key (never a real one); split so no scanner mistakes this file.
FAKE_KEY = "sk-" + "proj" + "Q7dfK29xLmP4vR8tZ1wY6nB3"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    return make_git_workspace(tmp_path / "repo"), tmp_path / "home"


async def test_round_trip_stale_revision_secret_and_size_cap(setup: tuple[Path, Path]) -> None:
    workspace, home = setup
    async with editor(workspace, home) as client:
        empty = await client.request(methods.GET_WORKSPACE_MEMORY, {})
        assert empty["revision"] == 0 and empty["text"] == ""
        assert empty["workspace"] == os.path.realpath(workspace)

        saved = await client.request(
            methods.SET_WORKSPACE_MEMORY, {"text": NOTES, "baseRevision": 0}
        )
        assert saved["revision"] == 1 and saved["source"] == "user"
        read = await client.request(methods.GET_WORKSPACE_MEMORY, {"workingDir": str(workspace)})
        assert read["text"] == NOTES and read["revision"] == 1
        assert [entry["revision"] for entry in read["history"]] == [1]

        # A second window's edit based on revision 0 must not overwrite revision 1.
        with pytest.raises(JsonRpcException) as stale:
            await client.request(methods.SET_WORKSPACE_MEMORY, {"text": "lost?", "baseRevision": 0})
        assert stale.value.data == {"code": "memory_conflict", "currentRevision": 1}
        assert "revision 1" in str(stale.value)

        with pytest.raises(JsonRpcException) as secret:
            await client.request(
                methods.SET_WORKSPACE_MEMORY,
                {"text": f"## Keys\n- openai: `{FAKE_KEY}`\n", "baseRevision": 1},
            )
        assert secret.value.code == -32602
        assert "line 2" in str(secret.value) and "secret" in str(secret.value)
        assert FAKE_KEY not in str(secret.value) and FAKE_KEY not in repr(secret.value.data)

        with pytest.raises(JsonRpcException) as too_big:
            await client.request(
                methods.SET_WORKSPACE_MEMORY, {"text": "x" * 32_001, "baseRevision": 1}
            )
        assert too_big.value.code == -32602 and "text" in str(too_big.value)
        with pytest.raises(JsonRpcException) as missing:
            await client.request(methods.SET_WORKSPACE_MEMORY, {"text": "no base"})
        assert missing.value.code == -32602 and "baseRevision" in str(missing.value)

        unchanged = await client.request(methods.GET_WORKSPACE_MEMORY, {})
        assert unchanged["text"] == NOTES and unchanged["revision"] == 1
        second = await client.request(
            methods.SET_WORKSPACE_MEMORY, {"text": NOTES + "- more\n", "baseRevision": 1}
        )
        assert [entry["revision"] for entry in second["history"]] == [2, 1]


async def test_new_and_resumed_sessions_are_given_the_memory(setup: tuple[Path, Path]) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(openai_stream(text=["ok"]), openai_stream(text=["ok again"]))
        async with editor(workspace, home) as client:
            await client.request(methods.SET_WORKSPACE_MEMORY, {"text": NOTES, "baseRevision": 0})
            session = (await client.request(methods.START_SESSION, {"agentRef": "coder"}))[
                "sessionId"
            ]
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "hi"})
            system = model.requests[0].json()["messages"][0]
            assert system["role"] == "system"
            assert "quokka-42" in system["content"]
            assert "=== Workspace memory" in system["content"]
            assert "the user can read and edit them" in system["content"].lower()
            assert "=== End of workspace memory ===" in system["content"]

            # Edited afterwards: a resumed session is given the new revision.
            await client.request(
                methods.SET_WORKSPACE_MEMORY,
                {"text": "## Build\n- the marker word is wombat-7\n", "baseRevision": 1},
            )
            await client.request(methods.RESUME_SESSION, {"sessionId": session})
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "again"})
            later = json.dumps(model.requests[1].json()["messages"][0])
            assert "wombat-7" in later and "quokka-42" not in later


async def test_introspection_merges_its_proposal_and_every_window_hears(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(text=["Tests run with make test."]),
            openai_stream(
                text=[
                    "DESCRIPTION: Learning the build\n",
                    "MEMORY:\n- uses make\n",
                    "WORKSPACE MEMORY:\n## Build\n- run `make unit` for the fast tests\n",
                    "## Style\n- ruff, line length 100\n",
                ]
            ),
        )
        async with editor(workspace, home) as a, editor(workspace, home) as b:
            await b.request(methods.GET_WORKSPACE_MEMORY, {})  # B's engine is open, watching
            await a.request(methods.SET_WORKSPACE_MEMORY, {"text": NOTES, "baseRevision": 0})
            await b.wait_until(lambda: len(b.memory_changed) >= 1, "B to hear revision 1")
            assert b.memory_changed[0]["revision"] == 1
            assert b.memory_changed[0]["source"] == "user"

            session = (await a.request(methods.START_SESSION, {"agentRef": "coder"}))["sessionId"]
            await a.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "how to test?"})
            checkpoint = await a.request(methods.CHECKPOINT_SESSION, {"sessionId": session})
            asked = model.requests[1].json()["messages"][0]["content"]
            assert "WORKSPACE MEMORY:" in asked and "quokka-42" in asked
            assert checkpoint["workspaceMemoryRevision"] == 2
            assert checkpoint["workingMemory"] == "- uses make"

            merged = await b.request(methods.GET_WORKSPACE_MEMORY, {})
            assert merged["revision"] == 2 and merged["source"] == "introspection"
            assert merged["sessionId"] == session
            # "## Build" was replaced, "## Style" appended.
            assert "quokka-42" not in merged["text"]
            assert merged["text"] == (
                "## Build\n- run `make unit` for the fast tests\n\n"
                "## Style\n- ruff, line length 100\n"
            )
            await b.wait_until(lambda: len(b.memory_changed) >= 2, "B to hear revision 2")
            assert b.memory_changed[1] == {
                "workspace": os.path.realpath(workspace),
                "revision": 2,
                "source": "introspection",
            }
            assert [c["revision"] for c in a.memory_changed] == [1, 2]

            # B still holds revision 1: its save is refused, not silently applied.
            with pytest.raises(JsonRpcException) as stale:
                await b.request(methods.SET_WORKSPACE_MEMORY, {"text": "old", "baseRevision": 1})
            assert stale.value.data == {"code": "memory_conflict", "currentRevision": 2}


async def test_offline_introspection_writes_memory_that_survives_restart_encrypted(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    async with editor(workspace, home) as client:
        session = (await client.request(methods.START_SESSION, {"agentRef": "relavium-default"}))[
            "sessionId"
        ]
        await client.request(
            methods.SEND_MESSAGE, {"sessionId": session, "text": "remember the pelican rule"}
        )
        checkpoint = await client.request(methods.CHECKPOINT_SESSION, {"sessionId": session})
        assert checkpoint["description"] == "remember the pelican rule"
        assert checkpoint["workspaceMemoryRevision"] == 1
        memory = await client.request(methods.GET_WORKSPACE_MEMORY, {"sessionId": session})
        assert memory["text"] == (
            "## Offline model notes\n"
            "- The latest request checkpointed here: remember the pelican rule\n"
        )
        # The same answer again changes nothing: no new revision.
        again = await client.request(methods.CHECKPOINT_SESSION, {"sessionId": session})
        assert "workspaceMemoryRevision" not in again

    async with editor(workspace, home) as client:
        after = await client.request(methods.GET_WORKSPACE_MEMORY, {})
        assert after["revision"] == 1 and "pelican rule" in after["text"]

    stored = b"".join(
        path.read_bytes()
        for path in (home / ".relavium").iterdir()
        if path.name.startswith("history.db") and path.is_file()
    )
    assert b"pelican" not in stored and b"Offline model notes" not in stored
