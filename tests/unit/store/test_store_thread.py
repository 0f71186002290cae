"""The store's worker thread: ordered calls, periodic checks it runs itself, the marks watch."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from store_records import make_record

from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.sessions import SessionStore
from relavium_lsp.store.store_thread import StoreThread

WAIT_S = 30.0  # generous: a loaded machine


def test_calls_run_in_order_and_shutdown_finishes_the_queued_ones() -> None:
    worker = StoreThread("test-store")
    gate = threading.Event()
    done: list[int] = []
    first = worker.submit(gate.wait, WAIT_S)
    later = [worker.submit(done.append, n) for n in range(20)]
    failing = worker.submit(int, "not a number")
    gate.set()
    worker.shutdown(wait=True)
    assert first.result() is True
    assert all(f.result() is None for f in later)
    assert done == list(range(20))
    with pytest.raises(ValueError):
        failing.result()
    with pytest.raises(RuntimeError):
        worker.submit(done.append, 99)


def test_a_periodic_check_runs_on_the_thread_with_no_call_queued() -> None:
    worker = StoreThread("test-store")
    threads: list[int] = []
    ran = threading.Event()

    def check() -> None:
        threads.append(threading.get_ident())
        if len(threads) == 3:
            ran.set()
        if len(threads) == 2:
            raise RuntimeError("a failing check does not stop the thread")

    stop = worker.every(0.0, check)  # always due: it runs after every call, and while idle
    assert ran.wait(WAIT_S)
    stop()
    seen = worker.submit(lambda: len(threads)).result(WAIT_S)
    for _ in range(5):
        worker.submit(lambda: None)
    assert worker.submit(lambda: len(threads)).result(WAIT_S) == seen  # stopped: no more looks
    worker.shutdown(wait=True)
    assert len(set(threads)) == 1 and threads[0] != threading.get_ident()


async def test_the_watch_wakes_the_loop_only_when_another_connection_commits(
    db_path: Path, db_key: DbKey
) -> None:
    store = await AsyncSessionStore.open(db_path, db_key)
    looks = 0
    looked_thrice = threading.Event()
    moved = asyncio.Event()
    woken: list[tuple[int, int]] = []

    def read(s: SessionStore) -> tuple[int, int]:
        nonlocal looks
        looks += 1
        if looks == 3:
            looked_thrice.set()
        return s.change_marks()

    first = await store.run(lambda s: s.change_marks())
    stop = store.watch(0.01, read, first, lambda: (woken.append(first), moved.set()))
    try:
        assert await asyncio.to_thread(looked_thrice.wait, WAIT_S)
        # Three looks at unchanged marks: the loop was never called.
        await store.run(lambda s: None)
        assert woken == []
        other = SessionStore.open(db_path, db_key)
        try:
            other.create_session(make_record())
        finally:
            other.close()
        await asyncio.wait_for(moved.wait(), WAIT_S)
        assert len(woken) == 1
    finally:
        stop()
        await store.close()
