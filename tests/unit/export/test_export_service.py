"""Export, fork and import through the engine's front door: events, saved paths, new sessions."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from relavium_lsp.contracts.events import SessionExported, StampedEvent, TokenUsage
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.errors import InvalidInput, SessionNotFound
from relavium_lsp.export.workflow_yaml import parse_workflow
from relavium_lsp.llm.seam import StopChunk, TextDelta
from tests.unit.export.export_support import Rig, export_untitled, open_rig


def _answer(text: str) -> list[object]:
    return [TextDelta(text=text), StopChunk(stop_reason="stop", usage=TokenUsage())]


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    opened = await open_rig(tmp_path / "home", [_answer("One."), _answer("Two.")])
    yield opened
    await opened.close()


@pytest.fixture
async def session_id(rig: Rig, tmp_path: Path) -> str:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    session = await rig.engine.start(
        context=SessionContext(working_dir=str(workspace)), title="Counting"
    )
    await rig.engine.send(session.id, "First?")
    await rig.engine.send(session.id, "Second?")
    return session.id


async def test_export_emits_the_event_and_records_untitled(
    rig: Rig, session_id: str, tmp_path: Path
) -> None:
    seen: list[StampedEvent] = []
    await rig.engine.subscribe(seen.append)
    outcome = await export_untitled(rig.engine, session_id)
    assert outcome.suggested_path == str(
        tmp_path / "workspace" / ".relavium" / "exports" / "counting.relavium.yaml"
    )
    assert [node.id for node in parse_workflow(outcome.content).nodes] == [
        "input",
        "turn-1",
        "turn-2",
        "output",
    ]
    exported = [event.payload for event in seen if isinstance(event.payload, SessionExported)]
    assert exported == [SessionExported(workflow_path="untitled", format="workflow")]
    # Both the database and the served copy of the row say so.
    stored = await rig.store.run(lambda s: s.get_session(session_id))
    assert stored is not None and stored.exported_workflow_path == "untitled"
    assert (await rig.engine.record(session_id)).exported_workflow_path == "untitled"
    # The export stays byte-stable although recording it touched the row.
    assert (await export_untitled(rig.engine, session_id)).content == outcome.content
    jsonl = await export_untitled(rig.engine, session_id, "jsonl")
    assert jsonl.suggested_path.endswith(f"/.relavium/exports/{session_id}.jsonl")
    # A JSONL export is announced but does not replace the workflow path.
    stored = await rig.store.run(lambda s: s.get_session(session_id))
    assert stored is not None and stored.exported_workflow_path == "untitled"
    backlog = await rig.engine.events_after(session_id, 0)
    assert [e.payload for e in backlog if isinstance(e.payload, SessionExported)][-1] == (
        SessionExported(workflow_path="untitled", format="jsonl")
    )


async def test_a_saved_scaffold_is_recorded_once(rig: Rig, session_id: str) -> None:
    text = (await export_untitled(rig.engine, session_id)).content
    path = "/work/project/.relavium/exports/counting.relavium.yaml"
    assert await rig.engine.note_saved_export(path, text) == session_id
    assert (await rig.engine.record(session_id)).exported_workflow_path == path
    count = len(await rig.engine.events_after(session_id, 0))
    # Saving again with the same path changes nothing and announces nothing.
    assert await rig.engine.note_saved_export(path, text) == session_id
    assert len(await rig.engine.events_after(session_id, 0)) == count
    # Edited beyond the strict schema, it is still recognised by its session id.
    edited = text.replace("version: 1", "version: 1\ncanvas_layout: grid")
    assert await rig.engine.note_saved_export(path + ".yaml", edited) is None
    assert await rig.engine.note_saved_export("/x/y.relavium.yml", edited) == (session_id)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("/a/b.yaml", "metadata: {relaviumExport: {sessionId: x}}"),
        ("/a/b.relavium.yaml", "metadata: {relaviumExport: {sessionId: unknown-session}}"),
        ("/a/b.relavium.yaml", "metadata: [1, 2]"),
        ("/a/b.relavium.yaml", "{{ not yaml"),
        ("/a/b.relavium.yaml", "metadata: {relaviumExport: {sessionId: 12}}"),
    ],
)
async def test_files_that_are_not_exports_are_ignored(
    rig: Rig, session_id: str, path: str, text: str
) -> None:
    assert await rig.engine.note_saved_export(path, text) is None


async def test_fork_branches_and_leaves_the_original_alone(rig: Rig, session_id: str) -> None:
    before = await rig.engine.full_transcript(session_id)
    fork_id = await rig.engine.fork(session_id, 2)
    record, messages = await rig.engine.full_transcript(fork_id)
    assert record.title == "Counting (fork)"
    assert record.agent_snapshot == before[0].agent_snapshot
    assert record.context == before[0].context
    assert [(m.role, m.content) for m in messages] == [(m.role, m.content) for m in before[1][:2]]
    assert await rig.engine.full_transcript(session_id) == before
    # The fork is a real session: it resumes and is listed.
    resumed = await rig.engine.resume(fork_id)
    assert [m.sequence_number for m in resumed.messages] == [1, 2]
    listed = await rig.engine.list_sessions()
    assert fork_id in {summary.id for summary in listed.sessions}
    with pytest.raises(InvalidInput, match="not a visible message"):
        await rig.engine.fork(session_id, 99)
    with pytest.raises(SessionNotFound):
        await rig.engine.fork("missing", 1)


async def test_import_creates_a_new_resumable_session(rig: Rig, session_id: str) -> None:
    jsonl = (await export_untitled(rig.engine, session_id, "jsonl")).content
    new_id = await rig.engine.import_jsonl(jsonl)
    assert new_id != session_id
    again = (await rig.engine.render_export(new_id, "jsonl")).content
    assert again.replace(new_id, session_id) == jsonl
    resumed = await rig.engine.resume(new_id)
    assert [m.role for m in resumed.messages] == ["user", "assistant", "user", "assistant"]


async def test_unknown_sessions_are_reported(rig: Rig) -> None:
    with pytest.raises(SessionNotFound):
        await export_untitled(rig.engine, "missing")
