"""The event log's append on the event loop's own thread (issue 25), and when it declines.

``AsyncSessionStore.append_events_now`` commits on the calling thread only when nothing could
make it wait; otherwise it returns ``None`` having written nothing, and the caller uses the
worker thread. What it writes is exactly what the worker path writes: the same stamped events,
committed (another connection reads them), full durability restored afterwards.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from store_records import make_record

from relavium_lsp.contracts.events import (
    AgentToken,
    EventPayload,
    SessionCancelled,
    StampedEvent,
    TurnStarted,
)
from relavium_lsp.engine import bus as bus_module
from relavium_lsp.engine.bus import GATHER_ROUNDS, EventBus
from relavium_lsp.store import async_store
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.db import BUSY_TIMEOUT_MS
from relavium_lsp.store.keys import DbKey
from relavium_lsp.store.sessions import SessionStore


async def _open_with_session(path: Path, key: DbKey) -> tuple[AsyncSessionStore, str]:
    store = await AsyncSessionStore.open(path, key)
    record = make_record()
    await store.run(lambda s: s.create_session(record))
    return store, record.id


def _tokens(*texts: str) -> list[EventPayload]:
    return [AgentToken(token=text, model="m") for text in texts]


def _statements(store: AsyncSessionStore) -> list[tuple[str, int]]:
    """Record every statement the store's connection runs, with the thread that ran it."""
    seen: list[tuple[str, int]] = []
    store._store.connection.set_trace_callback(
        lambda statement: seen.append((statement, threading.get_ident()))
    )
    return seen


async def _block_worker(store: AsyncSessionStore) -> tuple[asyncio.Task[None], threading.Event]:
    """Occupy the worker thread until the returned event is set."""
    started, release = threading.Event(), threading.Event()

    def hold(_store: SessionStore) -> None:
        started.set()
        assert release.wait(timeout=60)

    task = asyncio.create_task(store.run(hold))
    assert await asyncio.to_thread(started.wait, 60)
    return task, release


async def test_an_idle_store_appends_on_the_calling_thread(db_path: Path, db_key: DbKey) -> None:
    store, session_id = await _open_with_session(db_path, db_key)
    seen = _statements(store)
    stamped = store.append_events_now(session_id, _tokens("a", "b"))
    assert stamped is not None
    assert [event.sequence_number for event in stamped] == [1, 2]
    inserts = [thread for statement, thread in seen if statement.startswith("INSERT")]
    assert set(inserts) == {threading.get_ident()}  # committed on this thread
    # The same events the worker reads back from the durable log, in the same order.
    assert await store.run(lambda s: s.events_after(session_id, 0)) == stamped
    # And the worker path continues the same gapless sequence.
    later = await store.run(lambda s: s.append_events(session_id, [SessionCancelled()]))
    assert [event.sequence_number for event in later] == [3]
    await store.close()


async def test_what_it_commits_is_durable_and_full_durability_comes_back(
    db_path: Path, db_key: DbKey
) -> None:
    store, session_id = await _open_with_session(db_path, db_key)
    seen = _statements(store)
    assert store.append_events_now(session_id, [TurnStarted(user_message_sequence=1)]) is not None
    texts = [statement for statement, _ in seen]
    assert "PRAGMA synchronous=NORMAL" in texts  # the event log's relaxed durability, as before
    connection = store._store.connection
    connection.set_trace_callback(None)
    assert connection.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL again
    assert connection.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    other = SessionStore.open(db_path, db_key)  # another process's view: committed
    try:
        types = [event.type for event in other.events_after(session_id, 0)]
        assert types == ["session:turn_started"]
    finally:
        other.close()
    await store.close()


async def test_it_declines_while_the_worker_holds_the_connection(
    db_path: Path, db_key: DbKey
) -> None:
    store, session_id = await _open_with_session(db_path, db_key)
    task, release = await _block_worker(store)
    # Even a caller that stopped waiting leaves the connection the worker's until it is done.
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert store.append_events_now(session_id, _tokens("x")) is None
    release.set()
    await store.run(lambda s: None)  # FIFO: the held call has ended and been seen
    assert await store.run(lambda s: s.events_after(session_id, 0)) == []  # nothing written
    stamped = store.append_events_now(session_id, _tokens("y"))
    assert stamped is not None and [event.sequence_number for event in stamped] == [1]
    await store.close()


async def test_it_never_waits_for_another_process_write_lock(db_path: Path, db_key: DbKey) -> None:
    store, session_id = await _open_with_session(db_path, db_key)
    other = SessionStore.open(db_path, db_key)
    other.connection.execute("BEGIN IMMEDIATE")  # another process is writing
    seen = _statements(store)
    try:
        assert store.append_events_now(session_id, _tokens("x")) is None
        texts = [statement for statement, _ in seen]
        # No busy timeout while it asked for the lock, and the timeout restored afterwards.
        begin = texts.index("BEGIN IMMEDIATE")
        assert texts[begin - 1] == "PRAGMA busy_timeout=0"
        assert texts[begin + 1] == f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}"
        assert not any(text.startswith("INSERT") for text in texts)
    finally:
        other.connection.execute("ROLLBACK")
        other.close()
    store._store.connection.set_trace_callback(None)
    assert store._store.connection.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    assert await store.run(lambda s: s.events_after(session_id, 0)) == []
    await store.close()


async def test_a_log_near_its_checkpoint_and_a_closed_store_decline(
    db_path: Path, db_key: DbKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, session_id = await _open_with_session(db_path, db_key)
    monkeypatch.setattr(async_store, "INLINE_APPEND_MAX_LOG_BYTES", 0)
    assert store.append_events_now(session_id, _tokens("x")) is None
    monkeypatch.undo()
    assert store.append_events_now(session_id, _tokens("x")) is not None
    await store.close()
    assert store.append_events_now(session_id, _tokens("y")) is None


async def test_errors_fall_back_to_the_worker_having_written_nothing(
    db_path: Path, db_key: DbKey
) -> None:
    store, _ = await _open_with_session(db_path, db_key)
    assert store.append_events_now("no-such-session", _tokens("x")) is None
    assert not store._store.connection.in_transaction
    await store.close()


async def test_the_bus_delivers_the_durable_log_in_order_whichever_thread_commits(
    db_path: Path, db_key: DbKey
) -> None:
    """Half the stream commits on the loop, half on the worker: one gapless, ordered log."""
    store, session_id = await _open_with_session(db_path, db_key)
    bus = EventBus(store)
    seen = _statements(store)
    delivered: list[StampedEvent] = []
    bus.subscribe(delivered.append)
    texts = [f"t{number} " for number in range(40)]
    for text in texts[:20]:
        bus.emit(session_id, AgentToken(token=text, model="m"))
        await asyncio.sleep(0)  # the turn's yield per delta
        if len(text) % 2:
            await bus.drain(session_id)  # the network is slow: each delta commits on its own
    await bus.drain(session_id)
    task, release = await _block_worker(store)
    for text in texts[20:]:
        bus.emit(session_id, AgentToken(token=text, model="m"))
        await asyncio.sleep(0)
    bus.emit(session_id, SessionCancelled())
    for _ in range(GATHER_ROUNDS + 2):
        await asyncio.sleep(0)  # the pump stops gathering and hands the batch to the worker
    assert store._in_flight == 2  # the held call and the batch queued behind it
    release.set()
    await task
    await bus.drain(session_id)
    durable = await store.run(lambda s: s.events_after(session_id, 0))
    assert delivered == durable
    assert [event.sequence_number for event in durable] == list(range(1, len(durable) + 1))
    streamed = "".join(e.payload.token for e in durable if isinstance(e.payload, AgentToken))
    assert streamed == "".join(texts)
    assert isinstance(durable[-1].payload, SessionCancelled)
    committers = {thread for statement, thread in seen if statement.startswith("INSERT")}
    assert len(committers) == 2 and threading.get_ident() in committers  # both paths ran
    await store.close()


async def test_a_burst_already_read_commits_as_one_batch(
    db_path: Path, db_key: DbKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a fast stream, deltas emitted back to back (one network read) share one commit.

    The first delta after a pause goes out on its own at once; the ones right behind it —
    the stream is fast now — are gathered into one event.
    """
    monkeypatch.setattr(bus_module, "GATHER_WINDOW_S", 3600.0)  # "recent", however slow the CI
    store, session_id = await _open_with_session(db_path, db_key)
    bus = EventBus(store)
    delivered: list[StampedEvent] = []
    bus.subscribe(delivered.append)
    for number in range(10):
        bus.emit(session_id, AgentToken(token=f"t{number} ", model="m"))
        await asyncio.sleep(0)  # the turn yields once per delta, as TurnRunner does
    bus.emit(session_id, SessionCancelled())
    await bus.drain(session_id)
    tokens = [e.payload.token for e in delivered if isinstance(e.payload, AgentToken)]
    assert tokens == ["t0 ", "".join(f"t{n} " for n in range(1, 10))]
    assert delivered[-1].type == "session:cancelled"
    assert await store.run(lambda s: s.events_after(session_id, 0)) == delivered
    await store.close()


async def test_a_slow_stream_commits_each_delta_at_once(
    db_path: Path, db_key: DbKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bus_module, "GATHER_WINDOW_S", 0.0)  # every delta comes after a pause
    store, session_id = await _open_with_session(db_path, db_key)
    bus = EventBus(store)
    delivered: list[StampedEvent] = []
    bus.subscribe(delivered.append)
    for number in range(3):
        bus.emit(session_id, AgentToken(token=f"t{number} ", model="m"))
        await asyncio.sleep(0)  # one step: the pump has committed and delivered it
        assert len(delivered) == number + 1
    await store.close()


async def test_a_call_queued_with_submit_keeps_the_connection_the_workers(
    db_path: Path, db_key: DbKey
) -> None:
    store, session_id = await _open_with_session(db_path, db_key)
    started, release = threading.Event(), threading.Event()

    def hold(_store: SessionStore) -> None:
        started.set()
        assert release.wait(timeout=60)

    queued = store.submit(hold)
    assert store.append_events_now(session_id, _tokens("x")) is None  # queued, not yet run
    assert await asyncio.to_thread(started.wait, 60)
    assert store.append_events_now(session_id, _tokens("x")) is None  # running
    release.set()
    await queued
    stamped = store.append_events_now(session_id, _tokens("y"))
    assert stamped is not None and [event.sequence_number for event in stamped] == [1]
    await store.close()
