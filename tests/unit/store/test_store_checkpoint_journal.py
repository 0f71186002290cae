"""A turn's checkpoint journal: notes written in batches, deduplicated, safe against a kill.

``engine/history/checkpoint_journal.py`` over a real encrypted store; the kill test uses a real
process (``checkpoint_child_writer.py``) killed with SIGKILL while it writes.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from checkpoint_child_writer import TURN, after_text, before_text, file_path
from store_records import make_record

from relavium_lsp.engine.history.checkpoint_journal import TurnJournal
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.db.connection import Connection
from relavium_lsp.store.db.keys import KEY_ENV, DbKey
from relavium_lsp.store.rows import file_checkpoints as fc
from relavium_lsp.store.rows.file_checkpoints import FileNote
from relavium_lsp.store.sessions import SessionStore

CHILD = Path(__file__).with_name("checkpoint_child_writer.py")


async def _open(db_path: Path, db_key: DbKey) -> tuple[AsyncSessionStore, str]:
    store = await AsyncSessionStore.open(db_path, db_key)
    record = make_record()
    await store.run(lambda s: s.create_session(record))
    return store, record.id


def _count_writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many notes each write took (one entry per transaction)."""
    writes: list[int] = []
    real = fc.record_changes

    def counted(
        connection: Connection, session_id: str, user_sequence: int, notes: Sequence[FileNote]
    ) -> int:
        writes.append(len(notes))
        return real(connection, session_id, user_sequence, notes)

    monkeypatch.setattr(fc, "record_changes", counted)
    return writes


async def test_a_turns_notes_are_one_transaction_and_blobs_are_deduplicated(
    db_path: Path, db_key: DbKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = _count_writes(monkeypatch)
    store, session_id = await _open(db_path, db_key)
    journal = TurnJournal(store, session_id, 3)
    paths = [Path(f"/w/{n}.py") for n in range(100)]
    for n, path in enumerate(paths):
        journal.before_change(path, f"shared text {n % 10}\n")  # ten distinct contents
    journal.before_change(paths[0], "a later text is not the checkpoint")
    journal.before_change(Path("/w/new.py"), None)
    await journal.commit()
    assert writes == [101]
    rows = await store.run(lambda s: fc.list_checkpoints(s.connection, session_id))
    assert len(rows) == 101
    by_path = {row.path: row for row in rows}
    assert by_path["/w/0.py"].before_digest == fc.text_digest("shared text 0\n")
    assert by_path["/w/new.py"].before_digest is None
    blobs = await store.run(
        lambda s: s.connection.execute("SELECT COUNT(*) FROM checkpoint_blobs").fetchone()[0]
    )
    assert blobs == 10

    for path in paths:
        journal.after_change(path, "agent's text\n")
    journal.commit_later()  # queued now, in order before any later store call
    rows = await store.run(lambda s: fc.list_checkpoints(s.connection, session_id))
    assert {row.after_digest for row in rows if row.path != "/w/new.py"} == {
        fc.text_digest("agent's text\n")
    }
    await journal.commit()  # nothing left to write: no empty transaction is counted as work
    assert writes[0] == 101 and sum(writes[1:]) == 100
    await store.close()


async def test_a_failed_write_keeps_its_notes_for_the_next_one(
    db_path: Path, db_key: DbKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, session_id = await _open(db_path, db_key)
    real = fc.record_changes
    failures = [OSError("no space left on device")]

    def flaky(
        connection: Connection, session_id: str, user_sequence: int, notes: Sequence[FileNote]
    ) -> int:
        if failures:
            raise failures.pop()
        return real(connection, session_id, user_sequence, notes)

    monkeypatch.setattr(fc, "record_changes", flaky)
    journal = TurnJournal(store, session_id, 1)
    journal.before_change(Path("/w/a.py"), "first\n")
    with pytest.raises(OSError, match="no space"):
        await journal.commit()
    journal.before_change(Path("/w/b.py"), "second\n")
    await journal.commit()
    rows = await store.run(lambda s: fc.list_checkpoints(s.connection, session_id))
    assert [row.path for row in rows] == ["/w/a.py", "/w/b.py"]
    await store.close()


async def test_a_cancelled_commit_does_not_cancel_the_shared_write(
    db_path: Path, db_key: DbKey
) -> None:
    store, session_id = await _open(db_path, db_key)
    journal = TurnJournal(store, session_id, 1)
    blocker = asyncio.Event()
    started = asyncio.Event()

    # Hold the worker thread so the journal's write waits in its queue.
    loop = asyncio.get_running_loop()

    def hold(_store: SessionStore) -> None:
        loop.call_soon_threadsafe(started.set)
        asyncio.run_coroutine_threadsafe(blocker.wait(), loop).result()

    held = store.submit(hold)
    await started.wait()
    journal.before_change(Path("/w/a.py"), "text\n")
    first = asyncio.ensure_future(journal.commit())
    await asyncio.sleep(0)  # one pass of the loop: the task starts and awaits the write
    first.cancel()
    second = asyncio.ensure_future(journal.commit())
    blocker.set()
    await held
    await second  # the same write, not cancelled by the first caller
    with pytest.raises(asyncio.CancelledError):
        await first
    rows = await store.run(lambda s: fc.list_checkpoints(s.connection, session_id))
    assert [row.path for row in rows] == ["/w/a.py"]
    await store.close()


def test_a_process_killed_while_checkpointing_leaves_a_consistent_set(
    db_path: Path, db_key: DbKey
) -> None:
    store = SessionStore.open(db_path, db_key)
    record = make_record()
    store.create_session(record)
    store.close()
    env = dict(os.environ, **{KEY_ENV: db_key.raw.hex()})
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(db_path), record.id, "7"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "ready", child.stderr
        reported = 0
        while reported < 300:  # dozens of commits in, with writes still going on
            line = child.stdout.readline()
            assert line, child.stderr.read() if child.stderr else "the writer exited early"
            reported = int(line.split()[1])
    finally:
        os.kill(child.pid, signal.SIGKILL)  # it writes until killed: never leave it running
    with child:
        rest = child.stdout.read()
    assert child.returncode == -signal.SIGKILL
    for line in rest.splitlines():  # lines read ahead of the kill still count
        reported = max(reported, int(line.split()[1]))

    reopened = SessionStore.open(db_path, db_key)
    assert reopened.check_integrity() == ["ok"]
    rows = fc.list_checkpoints(reopened.connection, record.id)
    assert {row.user_sequence for row in rows} == {TURN}
    numbers = sorted(int(row.path.rsplit("-", 1)[1]) for row in rows)
    # Every commit reported before the kill is there, and what else is there is a prefix of
    # the files, never a gap (each write is one transaction and takes the notes in order).
    assert numbers == list(range(len(numbers))) and len(numbers) >= reported
    blobs = fc.load_blobs(reopened.connection, [row.before_digest or "" for row in rows])
    for row in rows:
        n = int(row.path.rsplit("-", 1)[1])
        assert row.path == str(file_path(n))
        # never a row without its blob, and the blob is that file's earlier text
        assert row.before_digest is not None and blobs[row.before_digest] == before_text(n)
        assert hashlib.sha256(before_text(n).encode()).hexdigest() == row.before_digest
        # the agent's text, or (its background write lost to the kill) still the earlier one:
        # a rewind then reports the file as changed instead of overwriting it
        assert row.after_digest in (fc.text_digest(after_text(n)), row.before_digest)
    reopened.close()
