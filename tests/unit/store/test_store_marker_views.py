"""View markers stored as what they add, read back whole (``store/rows/marker_views.py``)."""

from __future__ import annotations

import json

import pytest
from store_records import text

from relavium_lsp.contracts.content import (
    DurableContentPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    estimate_tokens,
)
from relavium_lsp.contracts.session import CompactionMarker, SessionMessage, ViewMessage
from relavium_lsp.errors import StoreError
from relavium_lsp.store.sessions import SessionStore


def _round(number: int, result: str) -> list[tuple[str, list[DurableContentPart]]]:
    call = ToolCallPart(id=f"call-{number}", name="read_file", args={"path": f"{number}.py"})
    return [
        ("assistant", [call]),
        ("tool", [ToolResultPart(tool_call_id=call.id, result=result)]),
    ]


def _marker(
    store: SessionStore,
    session_id: str,
    view: list[tuple[str, list[DurableContentPart]]],
    through: int,
) -> SessionMessage:
    layout = [ViewMessage(role=role, parts=len(parts)) for role, parts in view]
    parts = [part for _, message in view for part in message]
    marker = CompactionMarker(dropped_through_sequence=through, mode="clear", view=layout)
    return store.append_message(session_id, "system", parts, compaction=marker)


def _stored(store: SessionStore, message: SessionMessage) -> tuple[str, str, int]:
    row = store.connection.execute(
        "SELECT content, compaction, token_estimate FROM session_messages WHERE id = ?",
        (message.id,),
    ).fetchone()
    return str(row[0]), str(row[1]), int(row[2])


def _compacted_turn(
    store: SessionStore, session_id: str
) -> tuple[list[tuple[str, list[DurableContentPart]]], list[SessionMessage]]:
    """A turn of six rounds compacted three times; each view starts with the one before's."""
    user = store.append_message(session_id, "user", text("Read every file."))
    view: list[tuple[str, list[DurableContentPart]]] = [("user", list(user.content))]
    markers = []
    for number in range(6):
        for role, parts in _round(number, "x" * 2_000):
            last = store.append_message(session_id, role, parts)
        if number % 2 == 1:
            # The two rounds since the last marker, their results cleared into notes.
            view += [*_round(number - 1, "[cleared]"), *_round(number, "[cleared]")]
            markers.append(_marker(store, session_id, list(view), last.sequence_number))
    return view, markers


def _whole(view: list[tuple[str, list[DurableContentPart]]]) -> list[DurableContentPart]:
    return [part for _, message in view for part in message]


def test_a_marker_continuing_the_last_view_stores_only_what_it_adds(
    store: SessionStore, session_id: str
) -> None:
    view, markers = _compacted_turn(store, session_id)
    first, *later = (_stored(store, marker) for marker in markers)
    assert '"extends"' not in first[1]  # the first of a run is stored whole
    for content, compaction, _ in later:
        assert len(json.loads(content)) == 4  # two rounds: a call and a note each
        assert json.loads(compaction)["extends"]["keptMessages"] >= 1
    # Every reader gets the whole view, and counts its tokens.
    newest = markers[-1]
    assert newest.content == _whole(view)
    assert newest.compaction is not None and newest.compaction.view is not None
    assert [(m.role, m.parts) for m in newest.compaction.view] == [
        (role, len(parts)) for role, parts in view
    ]
    assert _stored(store, newest)[2] == estimate_tokens(_whole(view))
    assert store.last_message(session_id) == newest


def test_readers_rebuild_the_whole_view(store: SessionStore, session_id: str) -> None:
    _view, markers = _compacted_turn(store, session_id)
    newest = markers[-1]
    exported = [m for m in store.iter_messages(session_id) if m.compaction is not None]
    assert exported == markers
    page, _ = store.get_transcript(session_id, limit=1)
    assert page == [newest]
    tail = store.load_tail_within_budget(session_id, 100_000)
    assert tail[0] == newest
    walked = store.walk_tail(session_id, 100_000).within(100_000)
    assert walked is not None and walked[0] == newest
    # A rolled-back turn that compacted reads back whole too (exports keep it).
    store.roll_back_from(session_id, 1)
    hidden = [m for turn in store.rolled_back_turns(session_id) for m in turn.messages]
    assert [m for m in hidden if m.compaction is not None] == markers


def test_a_marker_stored_whole_reads_the_same(store: SessionStore, session_id: str) -> None:
    # Markers written before extensions hold their whole view: they read as they are.
    _view, markers = _compacted_turn(store, session_id)
    newest = markers[-1]
    assert newest.compaction is not None
    whole = newest.compaction.model_dump(mode="json", by_alias=True)
    store.connection.execute(
        "UPDATE session_messages SET content = ?, compaction = ? WHERE id = ?",
        (
            json.dumps([part.model_dump(mode="json", by_alias=True) for part in newest.content]),
            json.dumps(whole),
            newest.id,
        ),
    )
    assert store.last_message(session_id) == newest
    # The next marker extends it as it would an extension.
    more = [*_view, *_round(9, "[cleared]")]
    store.append_message(session_id, "assistant", [TextPart(text="more")])
    extended = _marker(store, session_id, more, newest.sequence_number + 1)
    assert json.loads(_stored(store, extended)[1])["extends"]["sequenceNumber"] == (
        newest.sequence_number
    )
    assert store.last_message(session_id) == extended
    assert extended.content == _whole(more)


def test_a_view_that_changed_from_the_start_is_stored_whole(
    store: SessionStore, session_id: str
) -> None:
    _view, markers = _compacted_turn(store, session_id)
    through = markers[-1].sequence_number
    other = _marker(store, session_id, [("user", text("Something else."))], through)
    assert '"extends"' not in _stored(store, other)[1]
    assert store.last_message(session_id) == other


def test_an_extension_whose_base_is_gone_is_a_clear_error(
    store: SessionStore, session_id: str
) -> None:
    _view, markers = _compacted_turn(store, session_id)
    store.connection.execute(
        "UPDATE session_messages SET compaction = NULL WHERE id = ?", (markers[1].id,)
    )
    with pytest.raises(StoreError, match=f"message {markers[2].sequence_number} .* unreadable"):
        store.last_message(session_id)
