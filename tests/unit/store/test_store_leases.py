"""Turn leases in the store: taking, refusing, releasing, taking over exactly once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from store_records import clock, text

from relavium_lsp.errors import LeaseLost, SessionRunningElsewhere
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.rows.leases import process_alive
from relavium_lsp.store.sessions import SessionStore


def test_a_live_lease_refuses_other_processes_and_is_released_with_the_turn(
    store: SessionStore, session_id: str
) -> None:
    store.begin_turn(session_id, text("go"), lease=("a-token", clock(1000.0, "a-token")))
    other = clock(1001.0, pid=200)
    with pytest.raises(SessionRunningElsewhere, match="another window"):
        store.begin_turn(session_id, text("me too"), lease=("b-token", other))
    with pytest.raises(SessionRunningElsewhere):
        store.soft_delete_session(session_id, clock=other)
    assert store.recover_session(session_id, other) is not None  # live: nothing written
    assert [m.role for m in store.get_transcript(session_id)[0]] == ["user"]
    assert store.renew_lease(session_id, "a-token", 1002.0) is False
    assert store.request_abort(session_id) is not None
    assert store.renew_lease(session_id, "a-token", 1003.0) is True  # the owner sees the ask
    assert store.end_turn(session_id, "a-token")
    assert store.read_lease(session_id) is None
    record = store.get_session(session_id)
    assert record is not None and record.status == "idle"


def test_a_stale_lease_is_taken_over_exactly_once(
    store: SessionStore, session_id: str, db_path: Path, db_key: DbKey
) -> None:
    store.begin_turn(session_id, text("go"), lease=("a-token", clock(1000.0, "a-token")))
    second = SessionStore.open(db_path, db_key)
    try:
        later = clock(1011.0, pid=200)  # past the 10 s timeout
        assert second.recover_abandoned(later) == [session_id]
        assert second.recover_abandoned(later) == []
        assert store.recover_abandoned(clock(1012.0, pid=300)) == []
    finally:
        second.close()
    messages = store.get_transcript(session_id)[0]
    assert [m.role for m in messages] == ["user", "system"]
    assert messages[-1].interruption is not None
    record = store.get_session(session_id)
    assert record is not None and record.status == "idle"
    # The stalled owner comes back: its lease is gone and it may not settle the session.
    assert store.renew_lease(session_id, "a-token", 1013.0) is None
    assert not store.end_turn(session_id, "a-token")


def test_a_dead_owner_is_stale_before_the_timeout(store: SessionStore, session_id: str) -> None:
    store.begin_turn(session_id, text("go"), lease=("a-token", clock(1000.0, "a-token")))
    assert store.recover_abandoned(clock(1001.0, pid=200, alive=True)) == []
    assert store.recover_abandoned(clock(1001.0, pid=200, alive=False)) == [session_id]


def test_a_session_left_running_without_a_lease_is_settled(
    store: SessionStore, session_id: str
) -> None:
    store.begin_turn(session_id, text("go"))  # as before leases existed: no lease row
    assert store.recover_abandoned(clock(1000.0)) == [session_id]
    assert [m.role for m in store.get_transcript(session_id)[0]] == ["user", "system"]


def test_list_changes_are_logged_by_triggers(store: SessionStore, session_id: str) -> None:
    store.rename_session(session_id, "named")
    store.set_status(session_id, "streaming")
    store.set_status(session_id, "streaming")  # no change, no row
    store.soft_delete_session(session_id)
    rows = store.connection.execute(
        "SELECT session_id, kind FROM session_changes ORDER BY seq"
    ).fetchall()
    assert [tuple(row) for row in rows] == [
        (session_id, "created"),
        (session_id, "renamed"),
        (session_id, "status"),
        (session_id, "deleted"),
    ]


def test_a_killed_owner_not_yet_reaped_counts_as_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert process_alive(child.pid)
        child.kill()
        # Wait for the exit without reaping it: the child is now a zombie, which must read
        # as dead.
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        assert not process_alive(child.pid)
    finally:
        child.kill()
        child.wait()
    assert process_alive(os.getpid())


def test_a_turn_whose_lease_was_taken_over_cannot_write_into_the_session(
    store: SessionStore, session_id: str, db_path: Path, db_key: DbKey
) -> None:
    store.begin_turn(session_id, text("go"), lease=("a-token", clock(1000.0, "a-token")))
    store.append_message(session_id, "assistant", text("still mine"))
    second = SessionStore.open(db_path, db_key)
    try:
        assert second.recover_abandoned(clock(1011.0, pid=200)) == [session_id]
    finally:
        second.close()
    with pytest.raises(LeaseLost, match="took this turn over"):
        store.append_message(session_id, "assistant", text("too late"))
    with pytest.raises(LeaseLost):
        store.roll_back_from(session_id, 1)
    # History rests on the final answer (no marker needed) and nothing came after it.
    assert [m.role for m in store.get_transcript(session_id)[0]] == ["user", "assistant"]
