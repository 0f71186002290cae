"""Opening the SQLCipher history database safely.

Order matters. The key is applied and then *verified with a read* before any statement that
could write (``journal_mode``, migrations), so a wrong key fails with
:class:`~relavium_lsp.errors.DatabaseKeyError` and leaves the file byte-identical.

Pragmas, and why:

- ``journal_mode=WAL`` — readers never block the writer; several server processes (two editor
  windows) share one file.
- ``synchronous=FULL`` — the WAL is fsynced at every commit, so a committed message also
  survives an OS crash or power loss (``docs/design.md`` §7: a crash loses at most the message
  in flight).
  ``NORMAL`` would survive a process crash (kill -9) just as well but could roll back the
  last few commits on power loss. ``python -m bench.store`` measures both: on the reference
  machine FULL cost about +0.1 to 0.2 ms per commit (1.1x to 1.5x NORMAL), which messages that
  arrive seconds apart — and an event bus that batches while a write is in flight — absorb.
- ``foreign_keys=ON`` — child rows can never point at a missing session.
- ``busy_timeout`` — a writer waits for another process's transaction instead of failing.
"""

from __future__ import annotations

import contextlib
import os
import random
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import sqlcipher3

from relavium_lsp.errors import DatabaseKeyError, StoreError
from relavium_lsp.paths import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, relavium_home, tighten_mode
from relavium_lsp.store.db.damage import corrupted, damage_of_unreadable_file
from relavium_lsp.store.db.keys import DbKey

BUSY_TIMEOUT_MS = 10_000
# How many busy timeouts a write waits through before it fails (see write_transaction).
WRITE_LOCK_ATTEMPTS = 3
PLAINTEXT_SQLITE_HEADER = b"SQLite format 3\x00"
Synchronous = Literal["NORMAL", "FULL"]
DEFAULT_SYNCHRONOUS: Synchronous = "FULL"
_SYNCHRONOUS_NORMAL = 1  # what ``PRAGMA synchronous`` reads back for NORMAL
WAL_AUTOCHECKPOINT_PAGES = 10_000  # ~40 MB of WAL before SQLite checkpoints on its own
_COMPANION_SUFFIXES = ("-wal", "-shm")


class Cursor(Protocol):
    """The part of a DB-API cursor the store uses."""

    @property
    def rowcount(self) -> int:
        """Rows changed by the last statement."""
        ...

    def fetchone(self) -> Any:
        """The next row, or ``None``."""
        ...

    def fetchall(self) -> list[Any]:
        """All remaining rows."""
        ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """The part of a DB-API connection the store uses (sqlcipher3 or stdlib sqlite3)."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor:
        """Run one statement."""
        ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Cursor:
        """Run one statement for each parameter row."""
        ...

    def close(self) -> None:
        """Close the connection."""
        ...

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open."""
        ...


def open_database(path: Path, key: DbKey, *, synchronous: Synchronous | None = None) -> Connection:
    """Open (creating if needed) the encrypted database at ``path`` with ``key``.

    The connection is in autocommit mode (``isolation_level=None``): the repository issues
    ``BEGIN IMMEDIATE`` itself. ``check_same_thread=False`` because the async facade opens it
    in its single worker thread, which is then the only thread that uses it.
    """
    _prepare_file(path)
    connection: Connection = sqlcipher3.connect(
        str(path),
        timeout=BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,
        check_same_thread=False,
    )
    try:
        # A wrong key is reported as DatabaseKeyError; SQLCipher's own stderr log of the
        # failed page HMAC would only be noise on the language server's stderr.
        connection.execute("PRAGMA cipher_log_level = NONE")
        connection.execute(f"PRAGMA key = {key.sqlcipher_pragma_value()}")
        _verify_key(connection, path, key)
        configure_connection(connection, synchronous=synchronous or DEFAULT_SYNCHRONOUS)
    except BaseException:
        connection.close()
        raise
    for file in (path, *(_companion(path, suffix) for suffix in _COMPANION_SUFFIXES)):
        if file.exists():
            tighten_mode(file, PRIVATE_FILE_MODE)
    return connection


def configure_connection(connection: Connection, *, synchronous: Synchronous) -> None:
    """Apply the store's pragmas (shared with the plain-sqlite3 benchmark baseline)."""
    _switch_to_wal(connection)
    connection.execute(f"PRAGMA synchronous={synchronous}")
    # A safety net only: the engine checkpoints between turns (SessionStore.checkpoint).
    connection.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT_PAGES}")
    connection.execute("PRAGMA foreign_keys=ON")
    connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


@contextlib.contextmanager
def relaxed_durability(connection: Connection) -> Iterator[None]:
    """Commit the enclosed (outermost) transaction without waiting for an fsync.

    For the event log only. In WAL mode with ``synchronous=NORMAL`` a commit is in the WAL
    file when it returns, so it survives the process being killed; only an operating-system
    crash could drop the newest ones. A token stream must not queue behind a disk that
    stalls for hundreds of milliseconds on an fsync; messages and costs keep ``FULL``.
    """
    if connection.in_transaction:
        yield
        return
    previous = int(connection.execute("PRAGMA synchronous").fetchone()[0])
    if previous <= _SYNCHRONOUS_NORMAL:
        yield
        return
    connection.execute("PRAGMA synchronous=NORMAL")
    try:
        yield
    finally:
        connection.execute(f"PRAGMA synchronous={previous}")


def _switch_to_wal(connection: Connection) -> None:
    """Put the database in WAL mode (persistent in the file, so only its creator really does).

    Switching needs an exclusive lock, and SQLite reports a conflicting switch by several
    processes creating one database at the same moment as BUSY *without* consulting the busy
    handler — so that one statement is retried here, within the usual busy timeout.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            break
        except sqlcipher3.OperationalError as error:
            if not _is_busy(error) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)  # a backoff between retries, in the DB thread, not a sync point
            delay = min(delay * 2, 0.2)
    if str(mode).lower() != "wal":
        raise StoreError(f"the history database could not switch to WAL mode (got {mode!r})")


def read_header(path: Path) -> bytes:
    """The first 16 bytes of ``path`` (empty for an empty file)."""
    with path.open("rb") as handle:
        return handle.read(len(PLAINTEXT_SQLITE_HEADER))


def _verify_key(connection: Connection, path: Path, key: DbKey) -> None:
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlcipher3.OperationalError as error:
        raise StoreError(f"cannot read the history database {path}: {error}") from None
    except sqlcipher3.DatabaseError as error:
        if read_header(path) == PLAINTEXT_SQLITE_HEADER:
            raise DatabaseKeyError(
                f"{path} is an unencrypted SQLite file, not a relavium history database; "
                "it was left untouched"
            ) from None
        # Damage and a wrong key look alike to SQLCipher; tell them apart (issue 16).
        damage = damage_of_unreadable_file(path, key.raw, error)
        if damage is not None:
            raise corrupted(path, damage) from None
        raise DatabaseKeyError(
            f"cannot decrypt the history database {path} with the key from {key.describe()} "
            "(wrong key, or not a relavium history database, or its first page is damaged — "
            "`relavium-lsp doctor --check` tells); the file was left untouched"
        ) from None


def _prepare_file(path: Path) -> None:
    parent = path.parent
    try:
        parent.mkdir(parents=True, mode=PRIVATE_DIR_MODE)
        os.chmod(parent, PRIVATE_DIR_MODE)  # mkdir's mode is filtered by the umask
    except FileExistsError:
        pass  # it existed already (or another process created it a moment ago)
    if parent.absolute() == relavium_home():
        # Only relavium's own home is tightened: a user-chosen historyPath may sit in a
        # directory they share on purpose; the files themselves are 0600 either way.
        tighten_mode(parent, PRIVATE_DIR_MODE)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        if not stat.S_ISREG(path.stat().st_mode):
            raise StoreError(f"the history database path {path} is not a regular file") from None
    else:
        os.close(descriptor)


def _companion(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


@contextlib.contextmanager
def write_transaction(connection: Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``: take the write lock up front, roll back on any error.

    Taking the lock at ``BEGIN`` (not at the first write) is what makes "read MAX, insert
    MAX+1" safe across processes, and it lets ``busy_timeout`` wait instead of deadlocking.
    SQLite's lock is not fair: a process that writes back-to-back can starve another one
    past the busy timeout (seen with two busy windows on a loaded machine). Nothing was done
    when ``BEGIN`` fails, so it is tried again after a random pause that breaks the lock-step
    with the other writer; only after :data:`WRITE_LOCK_ATTEMPTS` busy timeouts does the
    write fail, with a :class:`StoreError`.
    Re-entrant: inside an open transaction the block simply joins it (one commit for both).
    """
    if connection.in_transaction:
        yield
        return
    _begin_immediate(connection)
    try:
        yield
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def _begin_immediate(connection: Connection) -> None:
    for attempt in range(1, WRITE_LOCK_ATTEMPTS + 1):
        try:
            connection.execute("BEGIN IMMEDIATE")
            return
        except Exception as error:
            if not _is_busy(error):
                raise
            if attempt == WRITE_LOCK_ATTEMPTS:
                raise StoreError(
                    "the history database stayed locked by another process for longer than "
                    f"{WRITE_LOCK_ATTEMPTS * BUSY_TIMEOUT_MS // 1000} s; nothing was written"
                ) from error
            time.sleep(random.uniform(0.005, 0.05))  # noqa: S311 -- jitter, not a secret


@contextlib.contextmanager
def read_snapshot(connection: Connection) -> Iterator[None]:
    """A deferred read transaction: several SELECTs see one consistent snapshot."""
    connection.execute("BEGIN")
    try:
        yield
    finally:
        connection.execute("COMMIT")


def _is_busy(error: BaseException) -> bool:
    # sqlcipher3 and sqlite3 have distinct exception classes; both carry the SQLite code.
    name = str(getattr(error, "sqlite_errorname", ""))
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in str(error)
