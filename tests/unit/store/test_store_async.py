from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest
from store_records import make_record, text

from relavium_lsp.errors import DatabaseKeyError, StoreError
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.sessions import SessionStore
from relavium_lsp.tools.base import ArtifactStore


async def _open_with_session(path: Path, key: DbKey) -> tuple[AsyncSessionStore, str]:
    store = await AsyncSessionStore.open(path, key)
    record = make_record()
    await store.run(lambda s: s.create_session(record))
    return store, record.id


async def test_every_call_runs_on_one_worker_thread(db_path: Path, db_key: DbKey) -> None:
    store, session_id = await _open_with_session(db_path, db_key)
    loop_thread = threading.get_ident()
    threads = await asyncio.gather(*(store.run(lambda s: threading.get_ident()) for _ in range(20)))
    assert len(set(threads)) == 1
    assert threads[0] != loop_thread
    messages = await asyncio.gather(
        *(
            store.run(lambda s, i=i: s.append_message(session_id, "user", text(str(i))))
            for i in range(50)
        )
    )
    assert sorted(m.sequence_number for m in messages) == list(range(1, 51))
    await store.close()


async def test_cancelling_the_caller_never_half_applies(db_path: Path, db_key: DbKey) -> None:
    store, session_id = await _open_with_session(db_path, db_key)
    started = threading.Event()
    release = threading.Event()

    def slow_append(s: SessionStore) -> int:
        started.set()
        assert release.wait(timeout=30)
        return s.append_message(session_id, "user", text("survives")).sequence_number

    task = asyncio.create_task(store.run(slow_append))
    assert await asyncio.to_thread(started.wait, 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    release.set()
    # FIFO on the single worker: this runs after the abandoned append completed
    last = await store.run(lambda s: s.last_message(session_id))
    assert last is not None and last.content == text("survives")
    assert await store.run(lambda s: s.check_integrity()) == ["ok"]
    after = await store.run(lambda s: s.append_message(session_id, "user", text("next")))
    assert after.sequence_number == 2
    await store.close()


async def test_errors_propagate_to_the_caller(db_path: Path, db_key: DbKey) -> None:
    store, _ = await _open_with_session(db_path, db_key)
    record = make_record()
    await store.run(lambda s: s.create_session(record))
    with pytest.raises(StoreError, match="already exists"):
        await store.run(lambda s: s.create_session(record))
    assert await store.run(lambda s: s.get_session("missing")) is None
    await store.close()


async def test_artifact_store_protocol(db_path: Path, db_key: DbKey) -> None:
    store, session_id = await _open_with_session(db_path, db_key)
    artifacts: ArtifactStore = store
    artifact_id = await artifacts.save_artifact(session_id, "call-1", "the whole output")
    assert await artifacts.load_artifact(session_id, artifact_id) == "the whole output"
    assert await artifacts.load_artifact("other", artifact_id) is None
    await store.close()


async def test_close_is_idempotent_and_final(db_path: Path, db_key: DbKey) -> None:
    async with await AsyncSessionStore.open(db_path, db_key) as store:
        assert not store.closed
    assert store.closed
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.run(lambda s: s.last_event_sequence("x"))
    # the connection really was closed: the file can be reopened and is consistent
    reopened = SessionStore.open(db_path, db_key)
    assert reopened.check_integrity() == ["ok"]
    reopened.close()


async def test_open_with_a_wrong_key_raises(db_path: Path, db_key: DbKey) -> None:
    store = await AsyncSessionStore.open(db_path, db_key)
    await store.close()
    threads_before = threading.active_count()
    with pytest.raises(DatabaseKeyError):
        await AsyncSessionStore.open(db_path, DbKey(os.urandom(32), "env"))
    # no worker thread is left behind
    for thread in threading.enumerate():
        if thread.name.startswith("relavium-store"):
            thread.join(timeout=10)
    assert threading.active_count() <= threads_before
