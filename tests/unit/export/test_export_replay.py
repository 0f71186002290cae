"""Replay re-runs a real engine session against its own recordings."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.contracts.replay import ToolReplayMode
from relavium_lsp.contracts.session import SessionContext, SessionMessage
from relavium_lsp.errors import InvalidInput
from relavium_lsp.export.jsonl import export_jsonl
from relavium_lsp.export.replay_cassettes import message_chunks, runs_live
from relavium_lsp.export.tool_cassette import parse_tool_cassette
from relavium_lsp.llm.seam import ReasoningDelta, StopChunk, TextDelta, ToolCallEnd, ToolCallStart
from relavium_lsp.tools.editor_tools import editor_tools
from tests.unit.export.export_support import Rig, open_rig

NOTES = "- ship on Friday\n- tests first\n"
WRITE_ARGS = {"path": "out.txt", "content": "hello"}


def _tool_round_calls() -> list[list[object]]:
    """Turn 1: read (read-only) + write (side-effecting, refused) then an answer; turn 2: text."""
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


async def _replayed(rig: Rig, session_id: str) -> list[SessionMessage]:
    return (await rig.engine.full_transcript(session_id))[1]


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
    assert (report.turns_replayed, report.mode, report.cassette) == (2, "auto", "transcript")
    replay_record, replayed = await rig.engine.full_transcript(report.replay_session_id)
    assert [m.role for m in replayed] == roles
    assert [m.content for m in replayed] == [m.content for m in original]
    # A new session marked as a replay of the original, which stays untouched.
    assert replay_record.source.kind == "replay"
    assert replay_record.source.trigger_id == session_id
    assert not replay_record.source.interactive
    # auto: the read-only read_file ran again; the side-effecting write was served, never run.
    assert report.recorded_tool_calls == 1 and report.live_tool_calls == 1
    assert not (workspace / "out.txt").exists()
    after, again = await rig.engine.full_transcript(session_id)
    assert again == original and after.turn_count == 2
    # Every replay writes one audit row, listed from either session.
    audit = await rig.engine.list_replays(session_id)
    assert [(row.status, row.replay_session_id, row.turns_replayed) for row in audit] == [
        ("matched", report.replay_session_id, 2)
    ]
    assert await rig.engine.list_replays(report.replay_session_id) == audit


async def test_tool_replay_modes_choose_live_or_recorded_per_call(
    recorded: tuple[Rig, str], workspace: Path
) -> None:
    rig, session_id = recorded
    recorded_only = await rig.engine.replay(session_id, mode="recorded")
    assert recorded_only.matches, recorded_only.differences
    assert (recorded_only.live_tool_calls, recorded_only.recorded_tool_calls) == (0, 2)
    # Change what the read-only tool sees: a replay running it live notices, recorded does not.
    (workspace / "notes.txt").write_text("- ship next year\n", encoding="utf-8")
    for mode, live_tools in (("auto", ()), ("live", ()), ("mixed", ("read_file",))):
        report = await rig.engine.replay(session_id, mode=mode, live_tools=live_tools)  # type: ignore[arg-type]
        assert not report.matches, mode
        assert report.differences == ["message 3 (tool): content differs"], mode
        assert (report.live_tool_calls, report.recorded_tool_calls) == (1, 1), mode
        assert "ship next year" in str((await _replayed(rig, report.replay_session_id))[2].content)
    mixed_none = await rig.engine.replay(session_id, mode="mixed", live_tools=("list_directory",))
    assert mixed_none.matches and mixed_none.live_tool_calls == 0
    assert (await rig.engine.replay(session_id, mode="recorded")).matches
    assert not (workspace / "out.txt").exists()
    statuses = [row.status for row in await rig.engine.list_replays(session_id)]
    assert statuses == ["matched", "differed", "differed", "differed", "matched", "matched"]


async def test_a_side_effecting_tool_is_refused_as_a_live_tool(recorded: tuple[Rig, str]) -> None:
    rig, session_id = recorded
    with pytest.raises(InvalidInput, match="side-effecting"):
        await rig.engine.replay(session_id, mode="mixed", live_tools=("write_file",))
    assert await rig.engine.list_replays(session_id) == []


async def test_replay_of_an_imported_transcript_reads_the_stored_cassette(
    recorded: tuple[Rig, str], workspace: Path
) -> None:
    rig, session_id = recorded
    outcome = await rig.engine.render_export(session_id, "jsonl")
    cassette_text = outcome.tool_cassette_text()
    assert cassette_text is not None
    cassette = parse_tool_cassette(cassette_text)
    assert [call.tool for call in cassette.calls.values()] == ["read_file", "write_file"]
    assert all(call.duration_ms is not None for call in cassette.calls.values())
    # The cassette says what the notes said; the file now says otherwise.
    (workspace / "notes.txt").write_text("- ship next year\n", encoding="utf-8")
    imported = await rig.engine.import_jsonl(outcome.content, tool_cassette=cassette_text)
    report = await rig.engine.replay(imported, mode="recorded")
    assert report.matches, report.differences
    assert report.cassette == "stored"


async def test_an_export_keeps_its_cassette_for_later_replays(recorded: tuple[Rig, str]) -> None:
    rig, session_id = recorded
    assert (await rig.engine.replay(session_id, mode="recorded")).cassette == "transcript"
    outcome = await rig.engine.render_export(session_id, "jsonl")
    await rig.engine.announce_export(session_id, "jsonl", tool_cassette=outcome.tool_cassette)
    assert (await rig.engine.replay(session_id, mode="recorded")).cassette == "stored"


async def test_unfinished_turns_and_markers_are_skipped_and_reported(tmp_path: Path) -> None:
    from tests.unit.export.export_scenarios import interrupted_final_turn

    record, messages = interrupted_final_turn()
    record = record.model_copy(update={"context": SessionContext(working_dir=str(tmp_path))})
    rig = await open_rig(tmp_path / "home", [])
    try:
        imported = await rig.engine.import_jsonl(export_jsonl(record, messages))
        report = await rig.engine.replay(imported)
        assert report.matches, report.differences
        assert report.turns_replayed == 1
        assert report.skipped_turn_sequences == [5]
        assert report.skipped_system_messages == 1
        replayed = await _replayed(rig, report.replay_session_id)
        assert [m.role for m in replayed] == ["user", "assistant", "tool", "assistant"]
    finally:
        await rig.close()


def test_each_reasoning_block_stays_a_block() -> None:
    from tests.unit.export.export_scenarios import plain_turns

    _, messages = plain_turns()
    chunks = message_chunks(messages[3])
    assert [type(chunk).__name__ for chunk in chunks] == [
        "ReasoningDelta",
        "TextDelta",
        "StopChunk",
    ]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("recorded", {"pure": False, "read-only": False, "external-stateful": False}),
        ("auto", {"pure": True, "read-only": True, "external-stateful": False}),
        ("live", {"pure": True, "read-only": True, "external-stateful": True}),
    ],
)
def test_the_tool_replay_mode_decides_by_side_effect_class(
    mode: ToolReplayMode, expected: dict[str, bool]
) -> None:
    for replay_class, live in expected.items():
        assert runs_live(replay_class, mode, "some_tool", frozenset()) is live  # type: ignore[arg-type]
    assert not runs_live("side-effecting", mode, "write_file", frozenset({"write_file"}))


def test_mixed_runs_exactly_the_named_tools_and_never_a_side_effecting_one() -> None:
    chosen = frozenset({"read_file", "editor_diagnostics"})
    assert runs_live("read-only", "mixed", "read_file", chosen)
    assert runs_live("external-stateful", "mixed", "editor_diagnostics", chosen)
    assert not runs_live("pure", "mixed", "grep", chosen)
    assert not runs_live("side-effecting", "mixed", "read_file", chosen)


def test_editor_tools_are_external_stateful() -> None:
    """The editor's state is not part of a recording: only a ``live`` replay asks it again."""
    classes = {tool.replay for tool in editor_tools()}
    assert classes == {"external-stateful"}
