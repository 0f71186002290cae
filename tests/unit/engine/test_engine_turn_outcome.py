"""A turn that changed files and then failed or was aborted keeps its record (issue 38, §2.2).

The transcript, the turn's file checkpoints and the files on disk must agree, and a rewind
undoes the turn's edits. A real store, a real filesystem host, and a scripted agent behind a
loopback server speaking the OpenAI wire format. (A process killed between two edits is
``tests/e2e/test_turn_outcome.py``.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from relavium_lsp.contracts.content import ToolCallPart
from relavium_lsp.testing.scripted_agent import ScriptedAgent, Step
from relavium_lsp.testing.wire_scripts import openai_error, openai_stream
from tests.unit.engine.engine_harness import Harness, agent_engine, engine, scripted, text_reply

BEFORE = {"a.txt": "alpha before\n", "b.txt": "beta before\n"}


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for name, text in BEFORE.items():
        (workspace / name).write_text(text, encoding="utf-8")
    return workspace


def _write(name: str) -> Step:
    return Step(calls=[("write_file", {"path": name, "content": f"{name} by the agent\n"})])


async def _visible(h: Harness, session_id: str) -> list[Any]:
    return await h.store.run(lambda s: list(s.iter_messages(session_id)))


def _written(messages: list[Any]) -> list[str]:
    return [
        part.args["path"]
        for message in messages
        if message.role == "assistant"
        for part in message.content
        if isinstance(part, ToolCallPart) and part.name == "write_file"
    ]


async def _rewind_undoes_the_turn(h: Harness, session_id: str, workspace: Path) -> None:
    turns = await h.engine.list_checkpoints(session_id)
    assert len(turns) == 1
    result = await h.engine.rewind(session_id, turns[0].user_sequence)
    assert not result.conflicts and not result.failed
    for name, text in BEFORE.items():
        assert (workspace / name).read_text(encoding="utf-8") == text


async def test_a_provider_error_after_two_edits_keeps_the_turn(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    broken = openai_error(401, "invalid api key", error_type="authentication_error")
    agent = ScriptedAgent([_write("a.txt"), _write("b.txt"), Step(response=broken)])
    async with agent_engine(tmp_path, agent) as h:
        session = (await h.start()).record.id
        result = await h.engine.send(session, "edit both files")
        assert result.stop_reason == "error" and result.error is not None
        assert result.error.code == "provider_auth"
        assert result.kept
        completed = h.payloads(session, "session:turn_completed")[-1]
        assert completed.kept is True
        messages = await _visible(h, session)
        # The transcript says what the workspace shows: both edits, then the failure.
        assert [m.role for m in messages] == [
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "system",
        ]
        assert _written(messages) == ["a.txt", "b.txt"]
        marker = messages[-1].interruption
        assert marker is not None and marker.reason == "error"
        assert marker.interrupted_after_sequence == messages[-2].sequence_number
        assert result.last_sequence == messages[-1].sequence_number
        for name in BEFORE:
            assert (workspace / name).read_text(encoding="utf-8") == f"{name} by the agent\n"
        assert await h.status(session) == "failed"
        markdown = (await h.engine.render_export(session, "markdown")).content
        assert "This turn failed after it changed files" in markdown
        await _rewind_undoes_the_turn(h, session, workspace)


async def test_an_abort_between_two_edits_keeps_the_first(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    thinking = openai_stream(text=["Now the second file"], ending="stall")
    agent = ScriptedAgent([_write("a.txt"), Step(response=thinking), _write("b.txt")])
    async with agent_engine(tmp_path, agent) as h:
        session = (await h.start()).record.id
        turn = asyncio.create_task(h.engine.send(session, "edit both files"))
        # The second model call is streaming: the first edit is on disk, the second not.
        assert await asyncio.to_thread(agent.wait_for_requests, 2)
        assert await h.engine.abort(session)
        result = await turn
        assert result.stop_reason == "aborted" and result.kept
        messages = await _visible(h, session)
        assert [m.role for m in messages] == ["user", "assistant", "tool", "system"]
        assert _written(messages) == ["a.txt"]
        marker = messages[-1].interruption
        assert marker is not None and marker.reason == "aborted"
        assert (workspace / "a.txt").read_text(encoding="utf-8") == "a.txt by the agent\n"
        assert (workspace / "b.txt").read_text(encoding="utf-8") == BEFORE["b.txt"]
        assert await h.status(session) == "idle"
        await _rewind_undoes_the_turn(h, session, workspace)


async def test_a_failed_turn_that_changed_nothing_is_still_rolled_back(tmp_path: Path) -> None:
    provider = scripted(text_reply("fine"))  # the second call finds no recording: an error
    async with engine(tmp_path, provider) as h:
        session = (await h.start()).record.id
        assert (await h.engine.send(session, "hello")).stop_reason == "stop"
        result = await h.engine.send(session, "and again")
        assert result.stop_reason == "error" and not result.kept
        assert h.payloads(session, "session:turn_completed")[-1].kept is None
        messages = await _visible(h, session)
        assert [m.role for m in messages] == ["user", "assistant"]
