"""A tail walk that continues from the connection's last one reads what a fresh walk reads.

``SessionStore.walk_tail`` reads only the rows newer than its previous walk of the session
while no other connection committed (``store/tail_walk.py``). On random histories — appends,
tool rounds, compaction markers, rollbacks, budgets that shrink and grow — every walk must
equal a fresh walk of the same database, and its tail the specification's
(docs/design.md §2.4); another connection's writes in between are seen too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_records import make_record, text
from test_store_messages import _call, _reference_tail, _result, _user

from relavium_lsp.contracts.session import CompactionMarker
from relavium_lsp.store import messages
from relavium_lsp.store.keys import DbKey
from relavium_lsp.store.sessions import SessionStore
from relavium_lsp.store.tail_walk import TailWalk
from tests.hypothesis_profiles import examples


@pytest.fixture(scope="module")
def two_connections(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SessionStore, SessionStore]]:
    path: Path = tmp_path_factory.mktemp("walks") / "history.db"
    key = DbKey(os.urandom(32), "env")
    ours = SessionStore.open(path, key)
    theirs = SessionStore.open(path, key)
    yield ours, theirs
    theirs.close()
    ours.close()


_STEP = st.one_of(
    st.tuples(st.just("user"), st.integers(0, 600)),
    st.tuples(st.just("assistant"), st.integers(0, 600)),
    st.tuples(st.just("tools"), st.lists(st.integers(0, 600), min_size=1, max_size=3)),
    st.tuples(st.just("compact"), st.integers(0, 200)),
    st.tuples(st.just("rollback"), st.integers(0, 3)),
    st.tuples(st.just("elsewhere"), st.integers(0, 600)),  # the other connection appends
)


def fresh(store: SessionStore, sid: str, budget: int) -> TailWalk:
    """A walk of the whole tail, continuing from nothing."""
    return messages.walk_tail(store._connection, sid, budget)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.tuples(_STEP, st.integers(0, 400)), min_size=1, max_size=30))
def test_continued_walks_equal_fresh_ones(
    two_connections: tuple[SessionStore, SessionStore],
    steps: list[tuple[tuple[str, object], int]],
) -> None:
    store, other = two_connections
    record = make_record()
    store.create_session(record)
    sid = record.id
    calls = 0
    for (kind, value), budget in steps:
        if kind == "user":
            _user(store, sid, int(value))  # type: ignore[call-overload]
        elif kind == "assistant":
            store.append_message(sid, "assistant", text("a" * int(value)))  # type: ignore[call-overload]
        elif kind == "elsewhere":
            other.append_message(sid, "user", text("o" * int(value)))  # type: ignore[call-overload]
        elif kind == "tools":
            ids = [f"call-{calls + offset}" for offset in range(len(value))]  # type: ignore[arg-type]
            calls += len(ids)
            _call(store, sid, *ids)
            for call_id, size in zip(ids, value, strict=True):  # type: ignore[call-overload]
                _result(store, sid, call_id, size)
        elif kind == "compact":
            newest = store.last_message(sid)
            through = newest.sequence_number // 2 if newest is not None else 0
            store.append_message(
                sid,
                "system",
                text("s" * int(value)),  # type: ignore[call-overload]
                compaction=CompactionMarker(dropped_through_sequence=through),
            )
        elif kind == "rollback":
            last = store.last_message(sid)
            if last is not None:
                store.roll_back_from(sid, max(1, last.sequence_number - int(value)))  # type: ignore[call-overload]
        # Every step is followed by a turn's walk, for a budget that shrinks or grows.
        walk = store.walk_tail(sid, budget)
        expected = fresh(store, sid, budget)
        assert walk.rows == expected.rows
        assert walk.stop == expected.stop
        assert walk.stopped_at == expected.stopped_at
        visible = list(store.iter_messages(sid))
        for smaller in (budget, budget // 2, budget // 3):
            chosen = walk.within(smaller)
            if chosen is not None:
                assert chosen == _reference_tail(visible, smaller)
            else:  # only a tail extended back to its tool call needs the store
                assert store.load_tail_within_budget(sid, smaller)[-1].role == "tool"


def test_a_purged_and_reimported_session_is_walked_afresh(
    two_connections: tuple[SessionStore, SessionStore],
) -> None:
    store, _ = two_connections
    record = make_record()
    store.create_session(record)
    _user(store, record.id, 10)
    walk = store.walk_tail(record.id, 10_000)
    exported = store.export_snapshot(record.id)
    assert exported is not None
    row, history = exported
    store.purge_session(record.id)
    edited = [message.model_copy(update={"content": text("changed")}) for message in history]
    store.import_session(row, edited)
    again = store.walk_tail(record.id, 10_000)
    assert [m.message for m in again.rows] != [m.message for m in walk.rows]
    assert again.rows == fresh(store, record.id, 10_000).rows
