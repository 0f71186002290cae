"""Whole-session moves: import (all or nothing), fork (original untouched), snapshots."""

from __future__ import annotations

import uuid

import pytest
from store_records import make_record, text

from relavium_lsp.contracts.content import ToolCallPart, ToolResultPart
from relavium_lsp.contracts.session import CompactionMarker, SessionMessage
from relavium_lsp.errors import InvalidInput, SessionNotFound, StoreError
from relavium_lsp.store.sessions import SessionStore


def _grow(store: SessionStore, session_id: str) -> list[SessionMessage]:
    """A session with a tool round, a compaction marker and a rolled-back turn."""
    grown = [
        store.append_message(session_id, "user", text("read main.py please")),
        store.append_message(
            session_id,
            "assistant",
            [ToolCallPart(id="c1", name="read_file", args={"path": "main.py"})],
            model_id="gpt-x",
        ),
        store.append_message(
            session_id, "tool", [ToolResultPart(tool_call_id="c1", result="print('hi')")]
        ),
        store.append_message(session_id, "assistant", text("It prints hi."), model_id="gpt-x"),
        store.append_message(
            session_id,
            "system",
            text("summary so far"),
            compaction=CompactionMarker(dropped_through_sequence=2, mode="summarize"),
        ),
        store.append_message(session_id, "user", text("and then?")),
        store.append_message(session_id, "assistant", text("Nothing else."), model_id="gpt-x"),
    ]
    store.append_message(session_id, "user", text("aborted question"))
    store.roll_back_from(session_id, 8)
    return grown


def _copied(messages: list[SessionMessage], session_id: str) -> list[SessionMessage]:
    return [
        message.model_copy(update={"id": str(uuid.uuid4()), "session_id": session_id})
        for message in messages
    ]


def test_import_keeps_ids_times_and_sequences_and_derives_the_rest(
    store: SessionStore, session_id: str
) -> None:
    original = _grow(store, session_id)
    record = make_record(title="imported")
    messages = _copied(original, record.id)
    store.import_session(record, messages)
    assert list(store.iter_messages(record.id)) == messages
    imported = store.get_session(record.id)
    source = store.get_session(session_id)
    assert imported is not None and source is not None
    assert imported.message_count == source.message_count == 7
    assert imported.last_message_preview == source.last_message_preview == "Nothing else."
    # Running totals match a session that grew message by message.
    assert store.count_tokens_since_boundary(record.id) == store.count_tokens_since_boundary(
        session_id
    )
    budget = 10_000
    assert [m.content for m in store.load_tail_within_budget(record.id, budget)] == [
        m.content for m in store.load_tail_within_budget(session_id, budget)
    ]
    assert {s.id for s in store.list_sessions(query="prints").sessions} == {session_id, record.id}
    assert store.check_integrity() == ["ok"]
    # The next message continues after the imported sequence numbers.
    assert store.append_message(record.id, "user", text("next")).sequence_number == 8


def test_a_failing_import_leaves_nothing_behind(store: SessionStore, session_id: str) -> None:
    original = _grow(store, session_id)
    before = store.list_sessions().sessions
    record = make_record()
    clashing = _copied(original, record.id)
    clashing[5] = clashing[5].model_copy(update={"id": original[0].id})
    with pytest.raises(StoreError, match="nothing was imported"):
        store.import_session(record, clashing)
    assert store.get_session(record.id, include_deleted=True) is None
    assert list(store.iter_messages(record.id)) == []
    assert store.list_sessions().sessions == before
    assert store.check_integrity() == ["ok"]
    with pytest.raises(StoreError, match="increase"):
        store.import_session(record, list(reversed(_copied(original, record.id))))
    with pytest.raises(StoreError, match="another session"):
        store.import_session(record, _copied(original, "someone-else"))
    with pytest.raises(StoreError, match="already exists"):
        store.import_session(make_record(session_id), [])
    assert store.get_session(record.id, include_deleted=True) is None


def test_fork_copies_visible_history_up_to_a_message(store: SessionStore, session_id: str) -> None:
    original = _grow(store, session_id)
    source_before = store.get_session(session_id)
    fork = make_record(title="fork")
    assert store.fork_session(session_id, 5, fork) == 5
    copied = list(store.iter_messages(fork.id))
    assert [m.sequence_number for m in copied] == [1, 2, 3, 4, 5]
    assert [(m.role, m.content, m.timestamp) for m in copied] == [
        (m.role, m.content, m.timestamp) for m in original[:5]
    ]
    assert copied[4].compaction == original[4].compaction
    assert {m.id for m in copied}.isdisjoint(m.id for m in original)
    assert all(m.session_id == fork.id for m in copied)
    forked = store.get_session(fork.id)
    assert forked is not None
    assert (forked.message_count, forked.turn_count) == (5, 1)
    assert forked.last_message_preview == "It prints hi."
    # The original is untouched, row and messages.
    assert store.get_session(session_id) == source_before
    assert list(store.iter_messages(session_id)) == original
    assert store.check_integrity() == ["ok"]


@pytest.mark.parametrize("at", [8, 9, 0])
def test_fork_only_at_a_visible_message(store: SessionStore, session_id: str, at: int) -> None:
    _grow(store, session_id)
    fork = make_record()
    with pytest.raises(InvalidInput, match=f"message {at} is not a visible message"):
        store.fork_session(session_id, at, fork)
    assert store.get_session(fork.id, include_deleted=True) is None


def test_fork_of_a_missing_or_deleted_session(store: SessionStore, session_id: str) -> None:
    _grow(store, session_id)
    with pytest.raises(SessionNotFound):
        store.fork_session("nope", 1, make_record())
    store.soft_delete_session(session_id)
    with pytest.raises(SessionNotFound):
        store.fork_session(session_id, 1, make_record())


def test_export_snapshot(store: SessionStore, session_id: str) -> None:
    original = _grow(store, session_id)
    snapshot = store.export_snapshot(session_id)
    assert snapshot is not None
    assert snapshot[0] == store.get_session(session_id)
    assert snapshot[1] == original
    assert store.export_snapshot("nope") is None
    store.soft_delete_session(session_id)
    assert store.export_snapshot(session_id) is None
