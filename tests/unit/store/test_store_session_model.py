"""The session model in the store: usage per message, threading, fork lineage, details."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from store_records import make_record, text

from relavium_lsp.contracts.content import (
    DurableMediaPart,
    HandleSource,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.session import METADATA_MAX_BYTES, AgentSessionRecord
from relavium_lsp.contracts.usage import TokenUsage
from relavium_lsp.store.sessions import SessionStore


def test_messages_thread_onto_what_they_follow_and_keep_their_usage(
    store: SessionStore, session_id: str
) -> None:
    user, _ = store.begin_turn(session_id, text("list files"))
    asked = store.append_message(
        session_id,
        "assistant",
        [ToolCallPart(id="c1", name="list_directory", args={})],
        model_id="gpt-test",
        token_usage=TokenUsage(input_tokens=30, output_tokens=4, cache_read_tokens=10),
        cost_microcents=120,
    )
    first = store.append_message(
        session_id,
        "tool",
        [ToolResultPart(tool_call_id="c1", result="a")],
        parent_message_id=asked.id,
    )
    answer = store.append_message(session_id, "assistant", text("one file"))
    assert user.parent_message_id is None
    assert asked.parent_message_id == user.id
    assert first.parent_message_id == asked.id
    assert answer.parent_message_id == first.id
    stored, _ = store.get_transcript(session_id)
    assert stored == [user, asked, first, answer]
    assert stored[1].token_usage == TokenUsage(
        input_tokens=30, output_tokens=4, cache_read_tokens=10
    )
    assert stored[1].cost_microcents == 120
    # A rolled-back message is not what the next one follows.
    store.begin_turn(session_id, text("failed turn"))
    store.roll_back_from(session_id, 5)
    after = store.append_message(session_id, "user", text("next"))
    assert after.parent_message_id == answer.id


def test_fork_records_its_origin_and_remaps_threading(store: SessionStore, session_id: str) -> None:
    user, _ = store.begin_turn(session_id, text("one"))
    reply = store.append_message(session_id, "assistant", text("two"))
    store.append_message(session_id, "user", text("three"))
    fork = make_record()
    assert store.fork_session(session_id, reply.sequence_number, fork) == 2
    record = store.get_session(fork.id)
    assert record is not None and record.forked_from is not None
    assert record.forked_from.session_id == session_id
    assert record.forked_from.message_id == reply.id
    assert record.forked_from.sequence_number == reply.sequence_number
    copies, _ = store.get_transcript(fork.id)
    assert copies[0].parent_message_id is None
    assert copies[1].parent_message_id == copies[0].id != user.id


def test_description_and_metadata_round_trip_and_are_bounded(
    store: SessionStore, session_id: str
) -> None:
    store.set_description(session_id, "Fix the flaky test", "user")
    store.set_metadata(session_id, {"pinned": True, "ui": {"tab": 2}})
    record = store.get_session(session_id)
    assert record is not None
    assert (record.description, record.description_source) == ("Fix the flaky test", "user")
    assert record.metadata == {"pinned": True, "ui": {"tab": 2}}
    store.set_description(session_id, None, "user")
    store.set_metadata(session_id, None)
    cleared = store.get_session(session_id)
    assert cleared is not None
    assert (cleared.description, cleared.description_source, cleared.metadata) == (None, None, None)
    with pytest.raises(ValueError, match="bytes of JSON"):
        store.set_metadata(session_id, {"blob": "x" * METADATA_MAX_BYTES})
    with pytest.raises(ValidationError, match="bytes of JSON"):
        AgentSessionRecord.model_validate(
            {**make_record().model_dump(), "metadata": {"blob": "x" * METADATA_MAX_BYTES}}
        )


def test_new_statuses_are_stored(store: SessionStore, session_id: str) -> None:
    for status in ("failed", "awaiting_peer", "idle"):
        store.set_status(session_id, status)
        record = store.get_session(session_id)
        assert record is not None and record.status == status
    assert [s.id for s in store.list_sessions(status="idle").sessions] == [session_id]


def test_purge_erases_the_family_and_keeps_shared_media(store: SessionStore) -> None:
    shared = "media://sha256-" + "a" * 64
    only_here = "media://sha256-" + "b" * 64
    parent, child, stranger = make_record(), make_record(), make_record()
    store.create_session(parent)
    store.create_session(child.model_copy(update={"parent_session_id": parent.id}))
    store.create_session(stranger)
    for session, handle in ((parent, shared), (child, only_here), (stranger, shared)):
        store.begin_turn(
            session.id,
            [DurableMediaPart(mime_type="image/png", source=HandleSource(handle=handle))],
        )
        store.append_message(session.id, "assistant", text("quokka"))
    store.save_artifact(child.id, "c1", "full output")
    store.begin_turn(parent.id, text("rolled back"))
    store.roll_back_from(parent.id, 3)
    report = store.purge_session(parent.id)
    assert (report.sessions, report.messages) == (2, 5)
    assert report.orphaned_media == [only_here]
    assert store.get_session(parent.id, include_deleted=True) is None
    assert store.get_session(child.id, include_deleted=True) is None
    assert store.check_integrity() == ["ok"]
    assert [s.id for s in store.list_sessions(query="quokka").sessions] == [stranger.id]
    for table in ("session_messages", "session_artifacts", "session_events"):
        count = store.connection.execute(
            f"SELECT COUNT(*) FROM {table} WHERE session_id IN (?, ?)",
            (parent.id, child.id),
        ).fetchone()[0]
        assert count == 0
