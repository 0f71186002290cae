"""Who numbers a session's events: the database, the lease's owner, or the inbox (§3.1).

Two ``SessionStore`` connections on one encrypted file stand for two server processes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_records import clock, text

from relavium_lsp.contracts.events import AgentToken, SessionExported, StampedEvent
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.models import utc_timestamp
from relavium_lsp.store.rows import event_log
from relavium_lsp.store.sessions import SessionStore

BLOCK = event_log.RESERVE_BLOCK


@pytest.fixture
def other(db_path: Path, db_key: DbKey, store: SessionStore) -> Iterator[SessionStore]:
    """Another process's connection to the same database."""
    second = SessionStore.open(db_path, db_key)
    yield second
    second.close()


def _token(value: str) -> AgentToken:
    return AgentToken(token=value, model="m")


def _numbered(session_id: str, first: int, *tokens: str) -> list[StampedEvent]:
    return [
        StampedEvent(
            session_id=session_id,
            sequence_number=first + n,
            timestamp=utc_timestamp(),
            payload=_token(value),
        )
        for n, value in enumerate(tokens)
    ]


def _log(store: SessionStore, session_id: str) -> list[tuple[int, str]]:
    return [
        (event.sequence_number, getattr(event.payload, "token", event.type))
        for event in store.events_after(session_id, 0, 1000)
    ]


def _exported(path: str) -> SessionExported:
    return SessionExported(workflow_path=path, format="jsonl")


def test_the_owner_writes_its_own_numbers(store: SessionStore, session_id: str) -> None:
    store.append_events(session_id, [_token("before")])
    store.begin_turn(session_id, text("go"), lease=("a", clock(1000.0, "a")))
    events = _numbered(session_id, 2, "x", "y")
    assert store.append_numbered_events(session_id, events, [None, None], "a")
    assert store.append_numbered_events(session_id, _numbered(session_id, 4, "z"), [None], "a")
    assert _log(store, session_id) == [(1, "before"), (2, "x"), (3, "y"), (4, "z")]
    stored = store.events_after(session_id, 1, 10)
    assert [e.timestamp for e in stored] == [e.timestamp for e in events] + [stored[2].timestamp]


def test_another_process_appends_into_the_inbox_while_a_live_lease_is_held(
    store: SessionStore, other: SessionStore, session_id: str
) -> None:
    store.begin_turn(session_id, text("go"), lease=("a", clock(1000.0, "a")))
    assert other.append_events(session_id, [_exported("one")], clock=clock(1001.0, pid=200)) == []
    assert other.append_events(session_id, [_exported("two")]) == []  # no clock: live
    assert _log(store, session_id) == []
    waiting = store.read_event_inbox(session_id, 0)
    assert [payload.type for _id, payload in waiting] == ["session:exported"] * 2
    # The owner numbers them in its own run and deletes the rows in the same commit.
    ids = [inbox_id for inbox_id, _payload in waiting]
    owned = [
        StampedEvent(session_id=session_id, sequence_number=1, timestamp="t", payload=_token("a")),
        *[
            StampedEvent(session_id=session_id, sequence_number=2 + n, timestamp="t", payload=p)
            for n, (_id, p) in enumerate(waiting)
        ],
    ]
    assert store.append_numbered_events(session_id, owned, [None, *ids], "a")
    assert store.read_event_inbox(session_id, 0) == []
    assert [number for number, _what in _log(store, session_id)] == [1, 2, 3]


def test_the_next_ordinary_append_folds_the_inbox_first(
    store: SessionStore, other: SessionStore, session_id: str
) -> None:
    store.begin_turn(session_id, text("go"), lease=("a", clock(1000.0, "a")))
    other.append_events(session_id, [_exported("one"), _exported("two")])
    assert store.end_turn(session_id, "a")
    stamped = store.append_events(session_id, [_token("done")])
    assert [(e.sequence_number, e.type) for e in stamped] == [
        (1, "session:exported"),
        (2, "session:exported"),
        (3, "agent:token"),
    ]
    assert [getattr(e.payload, "workflow_path", None) for e in stamped[:2]] == ["one", "two"]
    assert store.read_event_inbox(session_id, 0) == []
    # Folding alone (the owner's call right after releasing its lease).
    store.begin_turn(session_id, text("again"), lease=("b", clock(1100.0, "b")))
    other.append_events(session_id, [_exported("three")])
    store.end_turn(session_id, "b")
    assert [e.sequence_number for e in store.append_events(session_id, [])] == [4]


def test_an_owner_whose_lease_was_taken_over_writes_nothing_under_its_numbers(
    store: SessionStore, other: SessionStore, session_id: str
) -> None:
    store.begin_turn(session_id, text("go"), lease=("a", clock(1000.0, "a")))
    assert store.append_numbered_events(session_id, _numbered(session_id, 1, "x"), [None], "a")
    # The owner stalls past the timeout; the other process takes over and runs its own turn.
    later = clock(1011.0, "b", pid=200)
    other.begin_turn(session_id, text("mine"), lease=("b", later))
    kept = store.append_numbered_events(session_id, _numbered(session_id, 2, "late"), [None], "a")
    assert kept is None
    # Not lost, not numbered past the new owner's back: it waits in the new owner's inbox.
    assert _log(store, session_id) == [(1, "x")]
    assert [p.type for _i, p in other.read_event_inbox(session_id, 0)] == ["agent:token"]
    assert other.end_turn(session_id, "b")
    # Numbered past everything "a" reserved: it may have delivered those numbers.
    assert [e.sequence_number for e in other.append_events(session_id, [])] == [BLOCK + 1]


def test_a_lost_lease_with_nobody_holding_it_is_numbered_by_the_log(
    store: SessionStore, other: SessionStore, session_id: str
) -> None:
    store.begin_turn(session_id, text("go"), lease=("a", clock(1000.0, "a")))
    other.append_events(session_id, [_token("elsewhere")], clock=clock(1011.0, pid=200))
    # The stale lease was taken over by that append (and its inbox folded): the owner's
    # numbers collide with the log's, so the log numbers its batch.
    assert store.read_lease(session_id) is None
    kept = store.append_numbered_events(session_id, _numbered(session_id, 1, "x"), [None], "a")
    assert kept is None
    assert _log(store, session_id) == [(BLOCK + 1, "elsewhere"), (BLOCK + 2, "x")]


def test_a_stale_takeover_folds_the_inbox(
    store: SessionStore, other: SessionStore, session_id: str
) -> None:
    store.begin_turn(session_id, text("go"), lease=("a", clock(1000.0, "a")))
    store.append_numbered_events(session_id, _numbered(session_id, 1, "x", "y"), [None, None], "a")
    other.append_events(session_id, [_exported("while it ran")], clock=clock(1001.0, pid=200))
    assert _log(store, session_id) == [(1, "x"), (2, "y")]
    # The owner dies; a list in the other process takes the lease over.
    assert other.recover_abandoned(clock(1002.0, pid=200, alive=False)) == [session_id]
    assert _log(other, session_id) == [(1, "x"), (2, "y"), (BLOCK + 1, "session:exported")]
    assert other.read_event_inbox(session_id, 0) == []
    roles = [m.role for m in other.get_transcript(session_id)[0]]
    assert roles == ["user", "system"]  # the interruption marker, exactly once


def test_an_inbox_row_folded_elsewhere_is_not_written_twice(
    store: SessionStore, other: SessionStore, session_id: str
) -> None:
    store.begin_turn(session_id, text("go"), lease=("a", clock(1000.0, "a")))
    other.append_events(session_id, [_exported("once")])
    ((inbox_id, payload),) = store.read_event_inbox(session_id, 0)
    # The owner read the row, then lost its lease to a takeover that folded it.
    other.recover_abandoned(clock(1011.0, pid=200))
    event = StampedEvent(session_id=session_id, sequence_number=1, timestamp="t", payload=payload)
    store.append_numbered_events(session_id, [event], [inbox_id], "a")
    assert [what for _n, what in _log(other, session_id)] == ["session:exported"]


def _reserved(store: SessionStore, session_id: str, token: str) -> int:
    return store.event_log_state(session_id, None, 0, token)[1]


def test_the_lease_reserves_a_block_and_write_behind_commits_extend_it(
    store: SessionStore, session_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_log, "RESERVE_BLOCK", 4)
    store.append_events(session_id, [_token("before")])
    store.begin_turn(session_id, text("go"), lease=("a", clock(1000.0, "a")))
    assert _reserved(store, session_id, "a") == 1 + 4
    assert _reserved(store, session_id, "b") == 0  # not that lease's
    # Three of four left after 2: nothing to extend yet.
    assert store.append_numbered_events(session_id, _numbered(session_id, 2, "x"), [None], "a") == 5
    # One left after 4 (less than half a block): extended in the same commit.
    written = _numbered(session_id, 3, "y", "z")
    assert store.append_numbered_events(session_id, written, [None, None], "a") == 4 + 4
    assert _reserved(store, session_id, "a") == 8


def test_a_takeover_numbers_past_the_dead_owners_reservation_and_never_fills_the_hole(
    store: SessionStore, other: SessionStore, session_id: str
) -> None:
    store.begin_turn(session_id, text("go"), lease=("a", clock(1000.0, "a")))
    # "a" delivered 1..3 but wrote only 1 before it was killed.
    store.append_numbered_events(session_id, _numbered(session_id, 1, "x"), [None], "a")
    assert other.recover_abandoned(clock(1002.0, pid=200, alive=False)) == [session_id]
    first = other.append_events(session_id, [_token("after")])
    assert [e.sequence_number for e in first] == [BLOCK + 1]
    # A later turn and ordinary appends go on from there; 2..BLOCK stay a hole for good.
    other.begin_turn(session_id, text("again"), lease=("b", clock(1003.0, "b", pid=200)))
    _last, reserved, _missed, _inbox = other.event_log_state(session_id, None, 0, "b")
    assert reserved == BLOCK + 1 + BLOCK
    other.append_numbered_events(session_id, _numbered(session_id, BLOCK + 2, "b"), [None], "b")
    assert other.end_turn(session_id, "b")
    other.append_events(session_id, [_token("later")])
    assert [n for n, _what in _log(other, session_id)] == [1, BLOCK + 1, BLOCK + 2, BLOCK + 3]
    # The floor goes with the session when it is purged.
    other.purge_session(session_id)
    assert other.event_log_state(session_id, None, 0, None)[0] == 0


def test_a_clean_release_leaves_no_hole(store: SessionStore, session_id: str) -> None:
    store.begin_turn(session_id, text("go"), lease=("a", clock(1000.0, "a")))
    store.append_numbered_events(session_id, _numbered(session_id, 1, "x", "y"), [None, None], "a")
    assert store.end_turn(session_id, "a")
    store.acquire_lease(session_id, "b", clock(1001.0, "b"))
    store.release_lease(session_id, "b")
    assert [e.sequence_number for e in store.append_events(session_id, [_token("z")])] == [3]
