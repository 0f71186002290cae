"""Replay re-runs a real engine session against its own recordings."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.engine.history.replay import replay_transcript
from relavium_lsp.export.jsonl import export_jsonl, import_jsonl
from relavium_lsp.export.replay_cassettes import message_chunks
from relavium_lsp.llm.seam import ReasoningDelta, StopChunk, TextDelta, ToolCallEnd, ToolCallStart
from relavium_lsp.store.media import MediaStore
from tests.unit.export.export_support import Rig, open_rig

NOTES = "- ship on Friday\n- tests first\n"
WRITE_ARGS = {"path": "out.txt", "content": "hello"}


def _tool_round_calls() -> list[list[object]]:
    """Turn 1: read (live-able) + write (side-effecting, refused) then an answer; turn 2: text."""
    return [
        [
            ReasoningDelta(text="Look at the notes.", signature="sig-abc"),
            ReasoningDelta(text="Then write.", signature="sig-def"),
            ToolCallStart(index=0, id="call-read", name="read_file"),
            ToolCallEnd(index=0, id="call-read", name="read_file", args={"path": "notes.txt"}),
            ToolCallStart(index=1, id="call-write", name="write_file"),
            ToolCallEnd(index=1, id="call-write", name="write_file", args=WRITE_ARGS),
            StopChunk(stop_reason="tool_use", usage=TokenUsage(input_tokens=10, output_tokens=5)),
        ],
        [
            TextDelta(text="The notes say: ship on Friday. "),
            TextDelta(text="I could not write out.txt."),
            StopChunk(stop_reason="stop", usage=TokenUsage(input_tokens=20, output_tokens=9)),
        ],
        [
            TextDelta(text="Anything else?"),
            StopChunk(stop_reason="stop", usage=TokenUsage(input_tokens=30, output_tokens=3)),
        ],
    ]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "notes.txt").write_text(NOTES, encoding="utf-8")
    return folder


@pytest.fixture
async def recorded(tmp_path: Path, workspace: Path) -> AsyncIterator[tuple[Rig, str]]:
    rig = await open_rig(tmp_path / "home", _tool_round_calls())
    session = await rig.engine.start(
        context=SessionContext(working_dir=str(workspace)), title="Notes"
    )
    first = await rig.engine.send(session.id, "Read notes.txt and write out.txt")
    second = await rig.engine.send(session.id, "Thanks")
    assert (first.stop_reason, second.stop_reason) == ("stop", "stop")
    yield rig, session.id
    await rig.close()


async def test_replay_reproduces_a_session_with_a_tool_round(
    recorded: tuple[Rig, str], workspace: Path
) -> None:
    rig, session_id = recorded
    _, original = await rig.engine.full_transcript(session_id)
    roles = [m.role for m in original]
    assert roles == ["user", "assistant", "tool", "tool", "assistant", "user", "assistant"]
    assert "Refused" in original[3].content[0].result  # type: ignore[union-attr]
    report = await rig.engine.replay(session_id)
    assert report.matches, report.differences
    assert report.turns_replayed == 2
    assert len(report.replayed) == len(original) == 7
    assert report.recorded_tool_calls == 2 and report.live_tool_calls == 0
    # The side-effecting call was served from the recording, never run.
    assert not (workspace / "out.txt").exists()
    after, again = await rig.engine.full_transcript(session_id)
    assert again == original and after.turn_count == 2


async def test_live_replay_reruns_read_only_tools_only(
    recorded: tuple[Rig, str], workspace: Path
) -> None:
    rig, session_id = recorded
    unchanged = await rig.engine.replay(session_id, live_tools=True)
    assert unchanged.matches, unchanged.differences
    assert (unchanged.live_tool_calls, unchanged.recorded_tool_calls) == (1, 1)
    # Change what the read-only tool sees: the live replay notices, the recorded one does not.
    (workspace / "notes.txt").write_text("- ship next year\n", encoding="utf-8")
    live = await rig.engine.replay(session_id, live_tools=True)
    assert not live.matches
    assert live.differences == ["message 3 (tool): content differs"]
    assert "ship next year" in str(live.replayed[2].content)
    assert (await rig.engine.replay(session_id)).matches
    assert not (workspace / "out.txt").exists()


async def test_replay_of_an_imported_transcript(recorded: tuple[Rig, str], tmp_path: Path) -> None:
    rig, session_id = recorded
    record, messages = await rig.engine.full_transcript(session_id)
    imported, imported_messages = import_jsonl(export_jsonl(record, messages))
    report = await replay_transcript(
        imported, imported_messages, media=MediaStore(tmp_path / "media")
    )
    assert report.matches, report.differences


async def test_unfinished_turns_and_markers_are_skipped_and_reported(tmp_path: Path) -> None:
    from tests.unit.export.export_scenarios import interrupted_final_turn

    record, messages = interrupted_final_turn()
    record = record.model_copy(update={"context": SessionContext(working_dir=str(tmp_path))})
    report = await replay_transcript(record, messages, media=MediaStore(tmp_path / "media"))
    assert report.matches, report.differences
    assert report.turns_replayed == 1
    assert report.skipped_turn_sequences == [5]
    assert report.skipped_system_messages == 1
    assert [entry.role for entry in report.replayed] == ["user", "assistant", "tool", "assistant"]


def test_each_reasoning_block_stays_a_block() -> None:
    from tests.unit.export.export_scenarios import plain_turns

    _, messages = plain_turns()
    chunks = message_chunks(messages[3])
    assert [type(chunk).__name__ for chunk in chunks] == [
        "ReasoningDelta",
        "TextDelta",
        "StopChunk",
    ]
