"""Checking a damaged history database and recovering what still reads (issue 16).

:func:`scan_history` reads every session — its row and its visible messages, the transcript —
one at a time, on a fresh connection after each failure (SQLCipher leaves a connection that met
a damaged page failing every later statement). It also reads each session's event log and
costs, which a transcript does not need but a healthy file has.

:func:`recover_history` copies every session that reads into a fresh encrypted database with
the same key, then swaps it in: the damaged file (and its ``-wal``/``-shm``) is kept beside it
as ``history.db.damaged-<time>``, never deleted. Event logs and cost rows are not copied (a
session's totals are on its row), but each session keeps its event floor: the highest event
number the damaged file had given out (logged, reserved by a lease, or a takeover's floor), so
an editor that saw those numbers is never shown a reused one. The newest revision of each
workspace memory is copied too (§2.6). What could not be read is reported by id. Run it with
no server using the file (close the editors first).
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import sqlcipher3

from relavium_lsp.contracts.memory import MemorySource
from relavium_lsp.contracts.session import AgentSessionRecord, SessionMessage
from relavium_lsp.errors import StoreError
from relavium_lsp.store.db.connection import Connection, open_database, write_transaction
from relavium_lsp.store.db.damage import is_corruption
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.rows import event_log, transfer
from relavium_lsp.store.rows.workspace_memory import write_memory
from relavium_lsp.store.sessions import SessionStore

T = TypeVar("T")
_COMPANIONS = ("-wal", "-shm")


@dataclass
class HistoryScan:
    """What reads in a history database and what does not."""

    path: Path
    integrity: list[str] = field(default_factory=list)
    readable: list[tuple[AgentSessionRecord, list[SessionMessage]]] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)  # session id → why
    damaged_logs: dict[str, str] = field(default_factory=dict)  # events/costs of a session
    listing_error: str | None = None  # the session table itself could not be listed
    # The newest revision of each workspace memory: (workspace, text, source, session id).
    memories: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    memory_error: str | None = None  # the workspace memory could not be read
    # Per session, the highest event number the file had given out, where it reads.
    event_floors: dict[str, int] = field(default_factory=dict)

    @property
    def healthy(self) -> bool:
        """Nothing damaged anywhere."""
        return (
            self.integrity == ["ok"]
            and not self.unreadable
            and not self.damaged_logs
            and self.listing_error is None
            and self.memory_error is None
        )


@dataclass(frozen=True)
class Recovery:
    """The outcome of :func:`recover_history`."""

    scan: HistoryScan
    kept_damaged: Path
    copied: int


class _Reader:
    """One connection, reopened after every damage error (see the module doc)."""

    def __init__(self, path: Path, key: DbKey) -> None:
        self._path, self._key = path, key
        self._connection: Connection = open_database(path, key)

    def attempt(self, read: Callable[[Connection], T]) -> T:
        """``read`` on the connection; after damage, once more on a fresh one.

        The retry matters: a connection poisoned by an earlier read (or by the integrity
        check, which may report damage without raising) would fail a healthy session too.
        """
        for last_try in (False, True):
            try:
                return read(self._connection)
            except sqlcipher3.DatabaseError as error:
                if not is_corruption(error):
                    raise
                self.reset()
                if last_try:
                    raise
        raise AssertionError("unreachable")

    def reset(self) -> None:
        """A fresh connection (whatever state the old one was left in)."""
        with contextlib.suppress(Exception):
            self._connection.close()
        self._connection = open_database(self._path, self._key)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._connection.close()


def scan_history(path: Path, key: DbKey) -> HistoryScan:
    """Read every session of ``path``; raises only when the file does not open at all."""
    scan = HistoryScan(path=path)
    reader = _Reader(path, key)
    try:
        scan.integrity = _integrity(reader)
        reader.reset()  # the check read every page: start the sessions on a clean connection
        try:
            scan.memories = reader.attempt(_memories)
        except sqlcipher3.DatabaseError as error:
            scan.memory_error = str(error)
        try:
            ids = reader.attempt(_session_ids)
        except sqlcipher3.DatabaseError as error:
            scan.listing_error = str(error)
            return scan
        for session_id in ids:
            try:
                found = reader.attempt(functools.partial(_snapshot, session_id=session_id))
            except sqlcipher3.DatabaseError as error:
                scan.unreadable[session_id] = str(error)
                continue
            if found is not None:
                scan.readable.append(found)
            try:
                reader.attempt(functools.partial(_read_logs, session_id=session_id))
            except sqlcipher3.DatabaseError as error:
                scan.damaged_logs[session_id] = str(error)
            with contextlib.suppress(sqlcipher3.DatabaseError):
                scan.event_floors[session_id] = reader.attempt(
                    functools.partial(_numbers_given, session_id=session_id)
                )
    finally:
        reader.close()
    return scan


def recover_history(path: Path, key: DbKey, *, now: datetime.datetime | None = None) -> Recovery:
    """Copy every readable session into a fresh database and swap it in (see the module doc)."""
    scan = scan_history(path, key)
    stamp = (now or datetime.datetime.now(datetime.UTC)).strftime("%Y%m%dT%H%M%SZ")
    fresh = path.with_name(f"{path.name}.recovering-{stamp}")
    kept = path.with_name(f"{path.name}.damaged-{stamp}")
    if fresh.exists() or kept.exists():
        raise StoreError(f"{fresh} or {kept} already exists; try again in a second")
    store = SessionStore.open(fresh, key)
    try:
        for record, messages in scan.readable:
            transfer.import_session(store.connection, record, messages)
            floor = scan.event_floors.get(record.id, 0)
            if floor:
                with write_transaction(store.connection):
                    event_log.raise_floor(store.connection, record.id, floor)
        for workspace, text, source, session_id in scan.memories:
            origin: MemorySource = "introspection" if source == "introspection" else "user"
            write_memory(
                store.connection,
                workspace,
                text,
                base_revision=0,
                source=origin,
                session_id=session_id,
            )
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        store.close()
    for suffix in ("", *_COMPANIONS):
        damaged = Path(str(path) + suffix)
        if damaged.exists():
            os.replace(damaged, Path(str(kept) + suffix))
    for suffix in ("", *_COMPANIONS):
        made = Path(str(fresh) + suffix)
        if made.exists():
            os.replace(made, Path(str(path) + suffix))
    return Recovery(scan=scan, kept_damaged=kept, copied=len(scan.readable))


def _integrity(reader: _Reader) -> list[str]:
    try:
        rows = reader.attempt(lambda c: c.execute("PRAGMA integrity_check(20)").fetchall())
    except sqlcipher3.DatabaseError as error:
        return [str(error)]
    return [str(row[0]) for row in rows]


def _memories(connection: Connection) -> list[tuple[str, str, str, str | None]]:
    exists = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'workspace_memory'"
    ).fetchone()
    if exists is None:  # a file from before migration 6
        return []
    rows = connection.execute(
        "SELECT workspace, text, source, session_id FROM workspace_memory AS m WHERE revision ="
        " (SELECT MAX(revision) FROM workspace_memory WHERE workspace = m.workspace)"
        " ORDER BY workspace"
    ).fetchall()
    return [(str(row[0]), str(row[1]), str(row[2]), row[3]) for row in rows]


def _session_ids(connection: Connection) -> list[str]:
    # Deleted sessions are hidden, not gone: a recovery keeps them too, as they were.
    rows = connection.execute("SELECT id FROM agent_sessions ORDER BY created_at").fetchall()
    return [str(row[0]) for row in rows]


def _snapshot(
    connection: Connection, *, session_id: str
) -> tuple[AgentSessionRecord, list[SessionMessage]] | None:
    return transfer.export_snapshot(connection, session_id)


def _read_logs(connection: Connection, *, session_id: str) -> None:
    for table in ("session_events", "session_costs"):
        for _row in _all_rows(connection, table, session_id):
            pass


def _numbers_given(connection: Connection, *, session_id: str) -> int:
    """The highest event number given out: logged, a takeover's floor, or a lease's reservation."""
    tables = {
        str(row[0])
        for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    if "session_event_floor" not in tables:  # a file from before migration 9: the log says it
        row = connection.execute(
            "SELECT COALESCE(MAX(sequence_number), 0) FROM session_events WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return int(row[0])
    reserved = connection.execute(
        "SELECT COALESCE(MAX(numbered_through), 0) FROM session_leases WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    return max(event_log.numbers_used(connection, session_id), int(reserved[0]))


def _all_rows(connection: Connection, table: str, session_id: str) -> Iterator[object]:
    yield from connection.execute(
        f"SELECT * FROM {table} WHERE session_id = ?",  # noqa: S608 (a fixed table name)
        (session_id,),
    )
