"""While a turn starts, the store's background work waits (``store/quiet_gate.py``, issue 25).

Each test proves an order of events, never a duration: a gate that must not defer for long
is given a limit of an hour, one whose limit must end the wait is given a tiny one, and the
test only waits (generously) for what must happen.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from store_records import make_record

from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.keys import DbKey
from relavium_lsp.store.quiet_gate import QuietGate
from relavium_lsp.store.sessions import SessionStore
from relavium_lsp.store.store_thread import StoreThread

WAIT_S = 30.0  # generous: a loaded machine
HOUR_S = 3600.0  # a limit that never ends a wait within a test


class Counted:
    """A periodic check that counts its runs and can signal the next one."""

    def __init__(self) -> None:
        self.runs = 0
        self.ran = threading.Event()

    def __call__(self) -> None:
        self.runs += 1
        self.ran.set()

    def next_run(self) -> bool:
        self.ran.clear()
        return self.ran.wait(WAIT_S)


def test_periodic_checks_wait_while_the_gate_is_held_and_run_when_it_opens() -> None:
    worker = StoreThread("test-store")
    worker.quiet.limit_s = HOUR_S
    check = Counted()
    stop = worker.every(0.001, check)  # due after almost every call
    try:
        assert check.next_run()
        hold = worker.quiet.hold()
        # The first call may still follow a look begun before the hold; none after it.
        seen = worker.submit(lambda: check.runs).result(WAIT_S)
        check.ran.clear()
        while worker.quiet.deferrals < 3:  # calls until looks fell due and were skipped
            worker.submit(lambda: None).result(WAIT_S)
        assert worker.submit(lambda: check.runs).result(WAIT_S) == seen
        assert not check.ran.is_set()
        hold.release()  # wakes the thread: no call comes, the hour-long retry is not waited
        assert check.ran.wait(WAIT_S)
        hold.release()  # idempotent
    finally:
        stop()
        worker.shutdown(wait=True)


def test_a_hold_never_released_stops_counting_after_its_limit() -> None:
    worker = StoreThread("test-store")
    worker.quiet.limit_s = HOUR_S  # what waits would wait an hour: only the hold's end helps
    check = Counted()
    stop = worker.every(0.001, check)
    try:
        assert check.next_run()
        worker.quiet.hold(limit_s=0.01)  # leaked: nobody releases it
        assert check.next_run()
        assert worker.quiet.quiet_until() is None
    finally:
        stop()
        worker.shutdown(wait=True)


def test_holds_that_follow_each_other_cannot_starve_a_check() -> None:
    worker = StoreThread("test-store")
    check = Counted()
    stop = worker.every(0.001, check)
    try:
        assert check.next_run()
        worker.quiet.limit_s = 0.01  # the longest any work waits in all
        holds = [worker.quiet.hold(limit_s=HOUR_S)]  # held for the whole test
        for _ in range(3):
            assert check.next_run()  # it runs although the gate never opens
            holds.append(worker.quiet.hold(limit_s=HOUR_S))
        assert worker.quiet.quiet_until() is not None
        for hold in holds:
            hold.release()
    finally:
        stop()
        worker.shutdown(wait=True)


def test_background_calls_wait_and_ordered_calls_overtake_them() -> None:
    worker = StoreThread("test-store")
    worker.quiet.limit_s = HOUR_S
    done: list[str] = []
    try:
        hold = worker.quiet.hold()
        first = worker.submit_background(done.append, "background 1")
        second = worker.submit_background(done.append, "background 2")
        worker.submit(done.append, "ordered 1")
        worker.submit(done.append, "ordered 2").result(WAIT_S)
        assert done == ["ordered 1", "ordered 2"]
        assert not first.done() and not second.done()
        hold.release()
        second.result(WAIT_S)
        assert done == ["ordered 1", "ordered 2", "background 1", "background 2"]
        # An open gate: a background call runs in its place in the queue.
        worker.submit_background(done.append, "background 3")
        worker.submit(done.append, "ordered 3").result(WAIT_S)
        assert done[-2:] == ["background 3", "ordered 3"]
    finally:
        worker.shutdown(wait=True)


def test_a_background_call_waits_no_longer_than_the_limit() -> None:
    worker = StoreThread("test-store")
    try:
        worker.quiet.hold(limit_s=HOUR_S)
        worker.quiet.limit_s = 0.01
        assert worker.submit_background(lambda: "ran").result(WAIT_S) == "ran"
        assert worker.quiet.quiet_until() is not None  # still held: it ran anyway
    finally:
        worker.shutdown(wait=True)


def test_shutdown_runs_the_background_calls_set_aside() -> None:
    worker = StoreThread("test-store")
    worker.quiet.limit_s = HOUR_S
    worker.quiet.hold()
    waiting = worker.submit_background(lambda: "ran")
    worker.submit(lambda: None).result(WAIT_S)  # the background call was set aside by now
    assert not waiting.done()
    worker.shutdown(wait=True)
    assert waiting.result(0) == "ran"


async def test_the_loop_side_wait_ends_when_the_gate_opens_or_at_the_limit() -> None:
    gate = QuietGate(limit_s=HOUR_S)
    await gate.wait_open()  # open: returns at once
    hold = gate.hold()
    waiting = asyncio.ensure_future(gate.wait_open())
    await asyncio.sleep(0)  # let it start waiting (an ordering step, not a timing one)
    assert not waiting.done()
    assert gate.deferrals == 1
    hold.release()
    await asyncio.wait_for(waiting, WAIT_S)
    # A hold that is never released: the wait ends at the gate's limit all the same.
    gate.hold()
    gate.limit_s = 0.01
    await asyncio.wait_for(gate.wait_open(), WAIT_S)
    # A cancelled wait leaves nothing behind.
    gate.limit_s = HOUR_S
    hold = gate.hold()
    cancelled = asyncio.ensure_future(gate.wait_open())
    await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert gate._waiters == []
    hold.release()


async def test_a_held_gate_defers_the_watch_and_it_catches_up_after(
    db_path: Path, db_key: DbKey
) -> None:
    store = await AsyncSessionStore.open(db_path, db_key)
    store.quiet_gate.limit_s = HOUR_S
    moved = asyncio.Event()
    first = await store.run(lambda s: s.change_marks())
    stop = store.watch(0.001, lambda s: s.change_marks(), first, moved.set)
    try:
        with store.turn_starting():
            await store.run(lambda s: None)  # a look begun before the hold has ended by now
            other = SessionStore.open(db_path, db_key)
            try:
                other.create_session(make_record())  # another window commits meanwhile
            finally:
                other.close()
            while store.quiet_gate.deferrals < 3:  # our calls run; the looks are skipped
                await store.run(lambda s: None)
            assert not moved.is_set()
        await asyncio.wait_for(moved.wait(), WAIT_S)  # seen once the gate opened
    finally:
        stop()
        await store.close()
