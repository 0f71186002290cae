from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import stat
from pathlib import Path

import pytest
import sqlcipher3
from store_records import make_record, text

from relavium_lsp.errors import DatabaseKeyError, StoreError
from relavium_lsp.store.db import connection as db_module
from relavium_lsp.store.db.connection import PLAINTEXT_SQLITE_HEADER, open_database, read_header
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.db.migrations import MIGRATIONS, Migration, latest_version, migrate
from relavium_lsp.store.sessions import SessionStore


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _directory_state(directory: Path) -> dict[str, str]:
    return {path.name: _digest(path) for path in sorted(directory.iterdir()) if path.is_file()}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_file_is_encrypted_from_its_first_byte(db_path: Path, db_key: DbKey) -> None:
    store = SessionStore.open(db_path, db_key)
    store.create_session(make_record(title="very recognisable title"))
    store.close()
    assert read_header(db_path) != PLAINTEXT_SQLITE_HEADER
    data = db_path.read_bytes()
    assert b"SQLite format 3" not in data
    assert b"very recognisable title" not in data
    assert b"agent_sessions" not in data
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(db_path).execute("SELECT count(*) FROM sqlite_master").fetchall()


def test_wrong_key_is_a_clear_error_and_leaves_every_file_identical(
    db_path: Path, db_key: DbKey, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    store = SessionStore.open(db_path, db_key)
    session = make_record()
    store.create_session(session)
    store.append_message(session.id, "user", text("hello"))
    store.close()
    before = _directory_state(db_path.parent)
    wrong = DbKey(os.urandom(32), "keyring")
    with pytest.raises(DatabaseKeyError) as raised:
        SessionStore.open(db_path, wrong)
    assert _directory_state(db_path.parent) == before
    message = str(raised.value)
    assert str(db_path) in message
    assert "keychain" in message
    assert "left untouched" in message
    for secret in (wrong.raw.hex(), db_key.raw.hex()):
        assert secret not in message
        assert secret not in repr(raised.value)
        assert all(secret not in record.getMessage() for record in caplog.records)
    # and the right key still opens it, with the data intact
    reopened = SessionStore.open(db_path, db_key)
    assert reopened.last_message(session.id) is not None
    reopened.close()


def test_wrong_key_while_another_connection_holds_the_wal(db_path: Path, db_key: DbKey) -> None:
    store = SessionStore.open(db_path, db_key)
    session = make_record()
    store.create_session(session)
    store.append_message(session.id, "user", text("kept in the WAL"))
    # -shm is SQLite's shared-memory lock/index file: any reader touches it. The data
    # files (the database and its WAL) must not change.
    data_files = (db_path, db_path.with_name("history.db-wal"))
    before = [_digest(path) for path in data_files]
    with pytest.raises(DatabaseKeyError):
        open_database(db_path, DbKey(os.urandom(32), "env"))
    assert [_digest(path) for path in data_files] == before
    assert store.check_integrity() == ["ok"]
    store.close()


def test_plaintext_sqlite_file_is_refused_untouched(tmp_path: Path, db_key: DbKey) -> None:
    path = tmp_path / "plain.db"
    plain = sqlite3.connect(path)
    plain.execute("CREATE TABLE t (x)")
    plain.commit()
    plain.close()
    before = _digest(path)
    with pytest.raises(DatabaseKeyError, match="unencrypted"):
        open_database(path, db_key)
    assert _digest(path) == before


def test_permissions_are_private(tmp_path: Path, db_key: DbKey) -> None:
    path = tmp_path / "fresh" / "nested" / "history.db"
    store = SessionStore.open(path, db_key)
    store.create_session(make_record())
    assert _mode(path.parent) == 0o700
    for name in ("history.db", "history.db-wal", "history.db-shm"):
        assert (path.parent / name).exists(), name
        assert _mode(path.parent / name) == 0o600, name
    store.close()


def test_loose_database_file_is_tightened(db_path: Path, db_key: DbKey) -> None:
    SessionStore.open(db_path, db_key).close()
    os.chmod(db_path, 0o644)
    SessionStore.open(db_path, db_key).close()
    assert _mode(db_path) == 0o600


def test_relavium_home_is_tightened_but_a_chosen_directory_is_not(
    tmp_path: Path, db_key: DbKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "relavium-home"
    shared = tmp_path / "shared"
    for directory in (home, shared):
        directory.mkdir()
        os.chmod(directory, 0o755)
    monkeypatch.setenv("RELAVIUM_HOME", str(home))
    SessionStore.open(home / "history.db", db_key).close()
    SessionStore.open(shared / "history.db", db_key).close()
    assert _mode(home) == 0o700
    assert _mode(shared) == 0o755
    assert _mode(shared / "history.db") == 0o600


def test_pragmas(store: SessionStore) -> None:
    connection = store.connection
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert connection.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000
    assert connection.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_migrations_are_recorded_and_idempotent(db_path: Path, db_key: DbKey) -> None:
    SessionStore.open(db_path, db_key).close()
    store = SessionStore.open(db_path, db_key)
    rows = store.connection.execute(
        "SELECT version, name, applied_at FROM schema_migrations ORDER BY version"
    ).fetchall()
    assert [row[0] for row in rows] == [migration.version for migration in MIGRATIONS]
    assert all(row[2] for row in rows)
    tables = {
        row[0]
        for row in store.connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
    }
    assert {
        "agent_sessions",
        "session_messages",
        "session_costs",
        "session_events",
        "session_artifacts",
        "session_messages_fts",
        "schema_migrations",
    } <= tables
    store.close()


def test_a_failing_migration_rolls_back_completely(db_path: Path, db_key: DbKey) -> None:
    SessionStore.open(db_path, db_key).close()

    def broken(connection: object) -> None:
        connection.execute("CREATE TABLE half_done (x)")  # type: ignore[attr-defined]
        raise RuntimeError("boom")

    connection = open_database(db_path, db_key)
    steps = (*MIGRATIONS, Migration(latest_version() + 1, "broken", broken))
    with pytest.raises(RuntimeError, match="boom"):
        migrate(connection, steps)
    names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in names
    version = connection.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0]
    assert version == latest_version()
    connection.close()


def test_database_from_a_newer_version_is_refused(db_path: Path, db_key: DbKey) -> None:
    SessionStore.open(db_path, db_key).close()
    connection = open_database(db_path, db_key)
    connection.execute(
        "INSERT INTO schema_migrations VALUES (?, 'from the future', '2099-01-01')",
        (latest_version() + 5,),
    )
    connection.close()
    with pytest.raises(StoreError, match="newer"):
        SessionStore.open(db_path, db_key)


def test_not_a_regular_file(tmp_path: Path, db_key: DbKey) -> None:
    (tmp_path / "history.db").mkdir()
    with pytest.raises(StoreError, match="not a regular file"):
        open_database(tmp_path / "history.db", db_key)


def test_sqlcipher_is_really_in_use(store: SessionStore) -> None:
    version = store.connection.execute("PRAGMA cipher_version").fetchone()
    assert version is not None and version[0]
    assert isinstance(store.connection, sqlcipher3.dbapi2.Connection)


def test_a_writer_locked_out_too_long_gets_a_store_error(db_path: Path, db_key: DbKey) -> None:
    store = SessionStore.open(db_path, db_key)
    record = make_record()
    store.create_session(record)
    other = open_database(db_path, db_key)
    other.execute("BEGIN IMMEDIATE")  # another process holding the write lock
    store.connection.execute("PRAGMA busy_timeout = 20")
    with pytest.raises(StoreError, match="locked by another process"):
        store.append_message(record.id, "user", text("blocked"))
    other.execute("ROLLBACK")
    other.close()
    assert store.append_message(record.id, "user", text("now")).sequence_number == 1
    store.close()


def test_a_writer_starved_through_one_busy_timeout_tries_again(
    db_path: Path, db_key: DbKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SessionStore.open(db_path, db_key)
    record = make_record()
    store.create_session(record)
    other = open_database(db_path, db_key)
    other.execute("BEGIN IMMEDIATE")  # the other window writing back-to-back
    store.connection.execute("PRAGMA busy_timeout = 20")
    pauses: list[float] = []

    def pause(seconds: float) -> None:  # between attempts: the other writer lets go now
        pauses.append(seconds)
        if other.in_transaction:
            other.execute("ROLLBACK")

    monkeypatch.setattr(db_module.time, "sleep", pause)
    assert store.append_message(record.id, "user", text("waited")).sequence_number == 1
    assert len(pauses) == 1 and 0 < pauses[0] < 0.1
    other.close()
    store.close()


def test_a_version_1_database_gains_cache_columns_and_keeps_its_costs(
    db_path: Path, db_key: DbKey
) -> None:
    connection = open_database(db_path, db_key)
    migrate(connection, MIGRATIONS[:1])
    columns = {row[1] for row in connection.execute("PRAGMA table_info(session_costs)")}
    assert "cache_read_tokens" not in columns
    connection.close()
    store = SessionStore.open(db_path, db_key)
    columns = {row[1] for row in store.connection.execute("PRAGMA table_info(session_costs)")}
    assert {"cache_read_tokens", "cache_write_tokens"} <= columns
    assert latest_version() >= 2
    store.close()
