from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from store_records import make_record, text

from relavium_lsp.contracts.content import (
    DurableReasoningPart,
    ReasoningPart,
    ToolCallPart,
    ToolResultPart,
    estimate_tokens,
)
from relavium_lsp.contracts.session import CompactionMarker, InterruptionMarker, SessionMessage
from relavium_lsp.errors import SessionNotFound
from relavium_lsp.store.keys import DbKey
from relavium_lsp.store.sessions import SessionStore
from tests.hypothesis_profiles import examples


def _tokens(message: SessionMessage) -> int:
    return estimate_tokens(message.content)


def _sequences(messages: list[SessionMessage]) -> list[int]:
    return [message.sequence_number for message in messages]


def test_append_allocates_sequences_and_updates_the_session(
    store: SessionStore, session_id: str
) -> None:
    before = store.get_session(session_id)
    assert before is not None
    first = store.append_message(session_id, "user", text("What does main.py do?"))
    second = store.append_message(
        session_id, "assistant", text("It starts the server."), model_id="gpt-x"
    )
    assert (first.sequence_number, second.sequence_number) == (1, 2)
    uuid.UUID(first.id)
    assert first.timestamp.endswith("Z") and len(first.timestamp) == len("2024-01-01T00:00:00.000Z")
    record = store.get_session(session_id)
    assert record is not None
    assert record.message_count == 2
    assert record.last_message_preview == "It starts the server."
    assert record.updated_at >= before.updated_at
    assert store.last_message(session_id) == second
    stored = store.get_transcript(session_id)[0]
    assert stored == [first, second]
    assert stored[1].model_id == "gpt-x"


def test_preview_ignores_tool_and_system_messages_and_is_bounded(
    store: SessionStore, session_id: str
) -> None:
    store.append_message(session_id, "user", text("  line one\n\n  line   two  " + "x" * 500))
    store.append_message(
        session_id, "assistant", [ToolCallPart(id="c1", name="read_file", args={})]
    )
    store.append_message(session_id, "tool", [ToolResultPart(tool_call_id="c1", result="data")])
    store.append_message(session_id, "system", text("system note"))
    record = store.get_session(session_id)
    assert record is not None
    preview = record.last_message_preview
    assert preview is not None
    assert preview.startswith("line one line two xxx")
    assert len(preview) <= 200


def test_in_flight_parts_are_never_persisted(store: SessionStore, session_id: str) -> None:
    with pytest.raises(ValidationError):
        store.append_message(
            session_id,
            "assistant",
            [ReasoningPart(text="hmm", signature="sig-secret")],  # type: ignore[list-item]
        )
    assert store.last_message(session_id) is None
    kept = store.append_message(session_id, "assistant", [DurableReasoningPart(text="hmm")])
    raw = store.connection.execute(
        "SELECT content FROM session_messages WHERE id = ?", (kept.id,)
    ).fetchone()[0]
    assert "signature" not in raw


def test_markers_and_camel_case_json_round_trip(store: SessionStore, session_id: str) -> None:
    store.append_message(session_id, "user", text("hi"))
    marker = store.append_message(
        session_id,
        "system",
        text("summary"),
        compaction=CompactionMarker(dropped_through_sequence=1, mode="summarize"),
    )
    interrupted = store.append_message(
        session_id,
        "system",
        text("interrupted"),
        interruption=InterruptionMarker(interrupted_after_sequence=2),
    )
    messages = store.get_transcript(session_id)[0]
    assert messages[1].compaction == marker.compaction
    assert messages[2].interruption == interrupted.interruption
    raw = store.connection.execute(
        "SELECT compaction FROM session_messages WHERE id = ?", (marker.id,)
    ).fetchone()[0]
    assert "droppedThroughSequence" in raw


def test_unknown_or_deleted_sessions(store: SessionStore, session_id: str) -> None:
    with pytest.raises(SessionNotFound):
        store.append_message("nope", "user", text("x"))
    with pytest.raises(SessionNotFound):
        store.roll_back_from("nope", 1)
    assert store.get_transcript("nope") == ([], False)
    assert store.load_tail_within_budget("nope", 1000) == []
    assert store.last_message("nope") is None
    assert store.count_tokens_since_boundary("nope") == (0, 0)
    assert list(store.iter_messages("nope")) == []
    store.soft_delete_session(session_id)
    with pytest.raises(SessionNotFound):
        store.append_message(session_id, "user", text("x"))


def test_roll_back_hides_the_turn_and_fixes_counts(store: SessionStore, session_id: str) -> None:
    store.append_message(session_id, "user", text("first question"))
    store.append_message(session_id, "assistant", text("first answer"))
    pending = store.append_message(session_id, "user", text("zebra question"))
    store.append_message(session_id, "assistant", text("partial zebra"))
    assert store.roll_back_from(session_id, pending.sequence_number) == 2
    assert store.roll_back_from(session_id, pending.sequence_number) == 0
    record = store.get_session(session_id)
    assert record is not None
    assert record.message_count == 2
    assert record.last_message_preview == "first answer"
    assert _sequences(store.get_transcript(session_id)[0]) == [1, 2]
    assert store.last_message(session_id).sequence_number == 2  # type: ignore[union-attr]
    assert store.list_sessions(query="zebra").sessions == []
    assert [s.id for s in store.list_sessions(query="question").sessions] == [session_id]
    # numbers are never reused: the next message continues after the hidden ones
    nxt = store.append_message(session_id, "user", text("again"))
    assert nxt.sequence_number == 5
    assert _sequences(store.get_transcript(session_id)[0]) == [1, 2, 5]
    assert store.count_tokens_since_boundary(session_id)[0] == 3
    assert store.check_integrity() == ["ok"]  # includes FTS5's own index check


def test_integrity_check_notices_a_stale_search_index(store: SessionStore, session_id: str) -> None:
    store.append_message(session_id, "user", text("indexed words"))
    # simulate a bug that hides a row without removing it from the index
    store.connection.execute("UPDATE session_messages SET rolled_back = 1")
    problems = store.check_integrity()
    assert problems != ["ok"]
    assert any("full-text index" in problem for problem in problems)


def test_roll_back_everything_clears_the_preview(store: SessionStore, session_id: str) -> None:
    store.append_message(session_id, "user", text("only"))
    store.roll_back_from(session_id, 1)
    record = store.get_session(session_id)
    assert record is not None
    assert (record.message_count, record.last_message_preview) == (0, None)


def test_transcript_pages_backwards(store: SessionStore, session_id: str) -> None:
    for index in range(25):
        store.append_message(session_id, "user", text(f"m{index}"))
    store.roll_back_from(session_id, 24)  # hides 24, 25
    page, more = store.get_transcript(session_id, limit=10)
    assert _sequences(page) == list(range(14, 24)) and more
    page, more = store.get_transcript(session_id, before_sequence=14, limit=10)
    assert _sequences(page) == list(range(4, 14)) and more
    page, more = store.get_transcript(session_id, before_sequence=4, limit=10)
    assert _sequences(page) == [1, 2, 3] and not more
    assert _sequences(list(store.iter_messages(session_id))) == list(range(1, 24))


def test_iter_messages_crosses_batches(store: SessionStore, session_id: str) -> None:
    for index in range(600):
        store.append_message(session_id, "user", text(str(index)))
    assert _sequences(list(store.iter_messages(session_id))) == list(range(1, 601))


def test_count_tokens_since_boundary(store: SessionStore, session_id: str) -> None:
    old = [store.append_message(session_id, "user", text("x" * 400)) for _ in range(3)]
    assert store.count_tokens_since_boundary(session_id) == (3, sum(map(_tokens, old)))
    marker = store.append_message(
        session_id,
        "system",
        text("summary"),
        compaction=CompactionMarker(dropped_through_sequence=3),
    )
    after = [store.append_message(session_id, "user", text("y" * 80)) for _ in range(2)]
    # The model sees the marker (its summary) and what follows it.
    seen = _tokens(marker) + sum(map(_tokens, after))
    assert store.count_tokens_since_boundary(session_id) == (2, seen)
    store.roll_back_from(session_id, after[1].sequence_number)
    assert store.count_tokens_since_boundary(session_id) == (1, _tokens(marker) + _tokens(after[0]))
    # rolling back the marker itself makes the older history count again
    store.roll_back_from(session_id, 4)
    assert store.count_tokens_since_boundary(session_id) == (3, sum(map(_tokens, old)))


# --- the tail loader ------------------------------------------------------------------------


def _user(store: SessionStore, sid: str, size: int) -> SessionMessage:
    return store.append_message(sid, "user", text("u" * size))


def _call(store: SessionStore, sid: str, *call_ids: str) -> SessionMessage:
    parts = [ToolCallPart(id=call_id, name="read_file", args={"path": "a"}) for call_id in call_ids]
    return store.append_message(sid, "assistant", parts)


def _result(store: SessionStore, sid: str, call_id: str, size: int) -> SessionMessage:
    return store.append_message(
        sid, "tool", [ToolResultPart(tool_call_id=call_id, result="r" * size)]
    )


def test_tail_returns_exactly_the_newest_that_fit(store: SessionStore, session_id: str) -> None:
    messages = [_user(store, session_id, 40 * (index % 5 + 1)) for index in range(30)]
    budget = sum(map(_tokens, messages[-7:]))
    tail = store.load_tail_within_budget(session_id, budget)
    assert tail == messages[-7:]
    assert store.load_tail_within_budget(session_id, budget - 1) == messages[-6:]
    assert store.load_tail_within_budget(session_id, 10**9) == messages


def test_tail_always_has_the_newest_message(store: SessionStore, session_id: str) -> None:
    _user(store, session_id, 10)
    big = _user(store, session_id, 100_000)
    assert store.load_tail_within_budget(session_id, 5) == [big]
    assert store.load_tail_within_budget(session_id, 0) == [big]


def test_tail_never_starts_with_an_orphan_tool_result(store: SessionStore, session_id: str) -> None:
    _user(store, session_id, 40)
    call = _call(store, session_id, "a", "b")
    result_a = _result(store, session_id, "a", 4000)
    result_b = _result(store, session_id, "b", 40)
    answer = store.append_message(session_id, "assistant", text("done"))
    # the budget fits result_b + answer + result_a but not the call
    budget = sum(map(_tokens, (result_a, result_b, answer)))
    assert store.load_tail_within_budget(session_id, budget) == [answer]
    # one more token than the call needs and the whole exchange is back, paired
    budget = sum(map(_tokens, (call, result_a, result_b, answer)))
    assert store.load_tail_within_budget(session_id, budget) == [call, result_a, result_b, answer]


def test_newest_tool_result_pulls_in_its_call(store: SessionStore, session_id: str) -> None:
    _user(store, session_id, 40)
    call = _call(store, session_id, "a", "b")
    result_a = _result(store, session_id, "a", 40)
    result_b = _result(store, session_id, "b", 40)
    assert store.load_tail_within_budget(session_id, 1) == [call, result_a, result_b]


def test_tail_stops_at_the_newest_compaction_boundary(store: SessionStore, session_id: str) -> None:
    for _ in range(5):
        _user(store, session_id, 40)
    store.append_message(
        session_id,
        "system",
        text("old summary"),
        compaction=CompactionMarker(dropped_through_sequence=2),
    )
    kept = _user(store, session_id, 40)  # seq 7: after the new boundary, kept verbatim
    marker = store.append_message(
        session_id,
        "system",
        text("new summary"),
        compaction=CompactionMarker(dropped_through_sequence=6),
    )
    after = [_user(store, session_id, 40) for _ in range(3)]
    # the marker stands first for everything up to seq 6; the old marker is superseded
    assert store.load_tail_within_budget(session_id, 10**9) == [marker, kept, *after]
    # when even the marker does not fit, the budget still rules
    budget = sum(map(_tokens, after))
    assert store.load_tail_within_budget(session_id, budget) == after


def test_tail_skips_rolled_back_messages(store: SessionStore, session_id: str) -> None:
    kept = [_user(store, session_id, 40) for _ in range(3)]
    _user(store, session_id, 40)
    store.roll_back_from(session_id, 4)
    newest = _user(store, session_id, 40)
    assert store.load_tail_within_budget(session_id, 10**9) == [*kept, newest]


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionStore]:
    import os

    path: Path = tmp_path_factory.mktemp("tail") / "history.db"
    store = SessionStore.open(path, DbKey(os.urandom(32), "env"))
    yield store
    store.close()


_STEP = st.one_of(
    st.tuples(st.just("user"), st.integers(0, 2000)),
    st.tuples(st.just("assistant"), st.integers(0, 2000)),
    st.tuples(st.just("tools"), st.lists(st.integers(0, 2000), min_size=1, max_size=3)),
    st.tuples(st.just("compact"), st.integers(0, 400)),
    st.tuples(st.just("rollback"), st.integers(0, 3)),
)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_STEP, min_size=1, max_size=40), budget=st.integers(0, 3000))
# A marker that is itself the newest message, after a tool result whose call does not fit:
# the tail is [marker, call, result] (docs/design.md §2.4, "History tail"). Found by CI (issue 26).
@example(steps=[("tools", [0]), ("compact", 0)], budget=8)
def test_tail_properties_on_random_histories(
    shared_store: SessionStore, steps: list[tuple[str, object]], budget: int
) -> None:
    store = shared_store
    record = make_record()
    store.create_session(record)
    sid = record.id
    calls = 0
    for kind, value in steps:
        if kind == "user":
            _user(store, sid, int(value))  # type: ignore[call-overload]
        elif kind == "assistant":
            store.append_message(sid, "assistant", text("a" * int(value)))  # type: ignore[call-overload]
        elif kind == "tools":
            sizes = list(value)  # type: ignore[call-overload]
            ids = [f"call-{calls + offset}" for offset in range(len(sizes))]
            calls += len(sizes)
            _call(store, sid, *ids)
            for call_id, size in zip(ids, sizes, strict=True):
                _result(store, sid, call_id, size)
        elif kind == "compact":
            store.append_message(
                sid,
                "system",
                text("s" * int(value)),  # type: ignore[call-overload]
                compaction=CompactionMarker(dropped_through_sequence=0),
            )
        else:
            last = store.last_message(sid)
            if last is not None:
                store.roll_back_from(sid, max(1, last.sequence_number - int(value)))  # type: ignore[call-overload]

    visible = list(store.iter_messages(sid))
    tail = store.load_tail_within_budget(sid, budget)
    assert tail == _reference_tail(visible, budget)
    if visible:
        assert visible[-1] in tail, "the newest message is always returned"
    _assert_paired(tail)
    extended = bool(tail) and tail[-1].role == "tool"
    if len(tail) > 1 and not extended:
        assert sum(map(_tokens, tail)) <= budget
    # Walked once for a larger budget, the rows decide this tail in memory (store/tail_walk.py,
    # the turn's one trip to the store): the same answer, or "ask the store" for an extension.
    for extra in (0, 37, budget + 500):
        chosen = store.walk_tail(sid, budget + extra).within(budget)
        if chosen is None:
            assert tail and tail[-1].role == "tool", "only an extended tail needs the store"
        else:
            assert chosen == tail
    assert store.walk_tail(sid, budget).within(budget + 1) is None  # never above the walk
    assert store.check_integrity() == ["ok"]


def _assert_paired(tail: list[SessionMessage]) -> None:
    seen: set[str] = set()
    for message in tail:
        if message.role == "tool":
            for part in message.content:
                assert isinstance(part, ToolResultPart)
                assert part.tool_call_id in seen, "a tool result without its call"
        seen.update(part.id for part in message.content if isinstance(part, ToolCallPart))


def _drop_orphans(messages: list[SessionMessage]) -> list[SessionMessage]:
    seen: set[str] = set()
    kept = []
    for message in messages:
        ids = [p.tool_call_id for p in message.content if isinstance(p, ToolResultPart)]
        if message.role == "tool" and (not ids or not set(ids) <= seen):
            continue
        seen.update(p.id for p in message.content if isinstance(p, ToolCallPart))
        kept.append(message)
    return kept


def _reference_tail(visible: list[SessionMessage], budget: int) -> list[SessionMessage]:
    """The specification (docs/design.md §2.4, "History tail"), over the whole in-memory history."""
    walked: list[SessionMessage] = []
    marker: SessionMessage | None = None
    boundary = 0
    total = 0
    for message in reversed(visible):
        if message.sequence_number <= boundary:
            break
        if (walked or marker is not None) and total + _tokens(message) > budget:
            break
        total += _tokens(message)
        if message.compaction is None:
            walked.insert(0, message)
        elif marker is None:
            marker = message
            boundary = message.compaction.dropped_through_sequence
    kept = _drop_orphans(walked)
    if not kept and walked:
        index = visible.index(walked[0]) - 1
        extended = list(walked)
        while index >= 0:
            extended.insert(0, visible[index])
            if visible[index].role != "tool" or visible[index].compaction is not None:
                break
            index -= 1
        kept = _drop_orphans(extended)
        # The newest message a marker does not stand for is what must survive; when nothing
        # older pairs it (a foreign or damaged history) it is returned alone.
        if not (kept and kept[-1] == walked[-1]):
            kept = walked[-1:]
    return kept if marker is None else [marker, *kept]


def test_begin_turn_is_one_atomic_commit(store: SessionStore, session_id: str) -> None:
    message, turns = store.begin_turn(session_id, text("go"))
    record = store.get_session(session_id)
    assert record is not None
    assert (message.role, message.sequence_number, turns) == ("user", 1, 1)
    assert (record.status, record.turn_count, record.message_count) == ("streaming", 1, 1)
    store.set_status(session_id, "idle")
    with pytest.raises(ValidationError):  # an in-flight part is refused mid-transaction
        store.begin_turn(session_id, [ReasoningPart(text="x", signature="sig")])  # type: ignore[list-item]
    after = store.get_session(session_id)
    assert after is not None
    assert (after.status, after.turn_count, after.message_count) == ("idle", 1, 1)
