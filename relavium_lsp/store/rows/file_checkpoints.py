"""File checkpoints and rewinds in the history database (``docs/design.md`` §6.3).

Functions over one connection, run on the store's worker thread
(``store.run(lambda s: record_before(s.connection, ...))``). File contents are kept once per
SHA-256 digest in ``checkpoint_blobs`` (so a file the agent touches in many turns, or that two
sessions saw with the same bytes, costs its bytes once); the database's encryption covers
them like every other row. A turn's notes about its files (:class:`FileNote`) are written in
batches, each one transaction (:func:`record_changes`): a checkpoint row and its blob are
committed together or not at all. Those commits do not wait for an fsync (the next message
commit, with ``synchronous=FULL``, syncs them): a killed process keeps them, and the turn is
not slowed by a disk flush per batch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from relavium_lsp.store.db.connection import Connection, relaxed_durability, write_transaction
from relavium_lsp.store.models import utc_timestamp


def text_digest(text: str) -> str:
    """The content address of a file's text (SHA-256 of its UTF-8 bytes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class CheckpointRow:
    """What one file held before a turn first changed it, and the digest the agent left."""

    user_sequence: int
    path: str
    before_digest: str | None
    after_digest: str | None
    size: int | None
    created_at: str
    review: Literal["kept", "undone"] | None = None  # None: not reviewed yet (§6.4)


@dataclass(frozen=True)
class RewindFileRow:
    """One file a rewind changed: its digest before the rewind and the digest it restored."""

    path: str
    before_digest: str | None
    after_digest: str | None


@dataclass(frozen=True)
class RewindRow:
    """A recorded rewind."""

    id: str
    session_id: str
    to_sequence: int
    forked_session_id: str | None
    created_at: str
    undone_at: str | None
    files: tuple[RewindFileRow, ...]


def _encoded(text: str) -> tuple[bytes, str]:
    """A text's stored bytes and their digest (one encoding for both: 10 KB files add up)."""
    data = text.encode("utf-8", "surrogatepass")
    return data, hashlib.sha256(data).hexdigest()


def _store_blob(connection: Connection, text: str) -> str:
    data, digest = _encoded(text)
    _insert_blob(connection, data, digest)
    return digest


def _insert_blob(connection: Connection, data: bytes, digest: str) -> None:
    connection.execute(
        "INSERT OR IGNORE INTO checkpoint_blobs (digest, size, content) VALUES (?, ?, ?)",
        (digest, len(data), data),
    )


@dataclass(frozen=True)
class FileNote:
    """What a turn learnt about one file: its text before the turn's first change, or after one."""

    kind: Literal["before", "after"]
    path: str
    text: str | None  # None: the file did not exist (before) or was deleted (after)


def _insert_before(
    connection: Connection,
    session_id: str,
    user_sequence: int,
    path: str,
    text: str | None,
    created_at: str,
) -> bool:
    data, digest = _encoded(text) if text is not None else (None, None)
    inserted = connection.execute(
        "INSERT OR IGNORE INTO session_checkpoints (session_id, user_sequence, path,"
        " before_digest, after_digest, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (session_id, user_sequence, path, digest, digest, created_at),
    ).rowcount
    if inserted != 1:
        return False  # the turn already has this file's checkpoint: its first text stays
    if data is not None and digest is not None:
        _insert_blob(connection, data, digest)  # same transaction: never a row without it
    return True


def _update_after(
    connection: Connection, session_id: str, user_sequence: int, path: str, text: str | None
) -> None:
    digest = text_digest(text) if text is not None else None
    connection.execute(
        "UPDATE session_checkpoints SET after_digest = ?"
        " WHERE session_id = ? AND user_sequence = ? AND path = ?",
        (digest, session_id, user_sequence, path),
    )


def record_changes(
    connection: Connection, session_id: str, user_sequence: int, notes: Sequence[FileNote]
) -> int:
    """Write a turn's notes, in order, in one transaction; returns how many checkpoints it took.

    A ``before`` note takes a checkpoint only the first time the turn changes the file; an
    ``after`` note records the digest of what the agent left (for spotting the user's edits).
    """
    if not notes:
        return 0
    taken = 0
    now = utc_timestamp()
    with relaxed_durability(connection), write_transaction(connection):
        for note in notes:
            if note.kind == "before":
                taken += _insert_before(
                    connection, session_id, user_sequence, note.path, note.text, now
                )
            else:
                _update_after(connection, session_id, user_sequence, note.path, note.text)
    return taken


def record_before(
    connection: Connection, session_id: str, user_sequence: int, path: str, text: str | None
) -> bool:
    """Keep ``text`` as what ``path`` held before this turn changed it (first change only).

    Returns whether a checkpoint was taken (``False``: the turn had already changed the file).
    """
    note = FileNote("before", path, text)
    return record_changes(connection, session_id, user_sequence, [note]) == 1


def record_after(
    connection: Connection, session_id: str, user_sequence: int, path: str, text: str | None
) -> None:
    """Note what the agent left in ``path`` (a digest only: for spotting the user's edits)."""
    record_changes(connection, session_id, user_sequence, [FileNote("after", path, text)])


def list_checkpoints(
    connection: Connection, session_id: str, *, from_sequence: int = 0
) -> list[CheckpointRow]:
    """Every checkpoint of a session at or after ``from_sequence``, oldest turn first."""
    rows = connection.execute(
        "SELECT c.user_sequence, c.path, c.before_digest, c.after_digest, b.size, c.created_at,"
        " c.review"
        " FROM session_checkpoints c LEFT JOIN checkpoint_blobs b ON b.digest = c.before_digest"
        " WHERE c.session_id = ? AND c.user_sequence >= ?"
        " ORDER BY c.user_sequence, c.path",
        (session_id, from_sequence),
    ).fetchall()
    return [
        CheckpointRow(
            int(r[0]), str(r[1]), r[2], r[3], None if r[4] is None else int(r[4]), r[5], r[6]
        )
        for r in rows
    ]


def latest_changed_turn(connection: Connection, session_id: str) -> int | None:
    """The user message of the session's newest turn that changed files (``None``: none).

    A checkpoint whose file the turn left as it found it (a refused change) does not count.
    """
    row = connection.execute(
        "SELECT MAX(user_sequence) FROM session_checkpoints WHERE session_id = ?"
        " AND before_digest IS NOT after_digest",
        (session_id,),
    ).fetchone()
    return None if row[0] is None else int(row[0])


def set_review(
    connection: Connection,
    session_id: str,
    paths: Iterable[str],
    review: Literal["kept", "undone"],
    *,
    from_sequence: int,
    through_sequence: int,
) -> None:
    """Record the review of ``paths`` for the turns ``from_sequence..through_sequence``."""
    with write_transaction(connection):
        connection.executemany(
            "UPDATE session_checkpoints SET review = ? WHERE session_id = ? AND path = ?"
            " AND user_sequence BETWEEN ? AND ?",
            [(review, session_id, path, from_sequence, through_sequence) for path in paths],
        )


def load_blobs(connection: Connection, digests: Iterable[str]) -> dict[str, str]:
    """The texts stored under ``digests`` (missing ones are absent from the result)."""
    wanted = sorted(set(digests))
    found: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for digest, content in connection.execute(
            f"SELECT digest, content FROM checkpoint_blobs WHERE digest IN ({marks})",  # noqa: S608
            chunk,
        ):
            found[str(digest)] = bytes(content).decode("utf-8", "surrogatepass")
    return found


def record_rewind(
    connection: Connection,
    *,
    rewind_id: str,
    session_id: str,
    to_sequence: int,
    forked_session_id: str | None,
    files: Sequence[tuple[str, str | None, str | None]],
    replaced_texts: Iterable[str],
) -> None:
    """Record a rewind: ``files`` are (path, digest before, digest restored) triples.

    ``replaced_texts`` are the texts the rewind replaced, kept so that it can be undone.
    """
    with write_transaction(connection):
        for text in replaced_texts:
            _store_blob(connection, text)
        connection.execute(
            "INSERT INTO session_rewinds (id, session_id, to_sequence, forked_session_id,"
            " created_at) VALUES (?, ?, ?, ?, ?)",
            (rewind_id, session_id, to_sequence, forked_session_id, utc_timestamp()),
        )
        connection.executemany(
            "INSERT INTO session_rewind_files (rewind_id, path, before_digest, after_digest)"
            " VALUES (?, ?, ?, ?)",
            [(rewind_id, path, before, after) for path, before, after in files],
        )


def load_rewind(connection: Connection, session_id: str, rewind_id: str) -> RewindRow | None:
    """A recorded rewind of ``session_id`` (or of the session it forked), or ``None``."""
    row = connection.execute(
        "SELECT id, session_id, to_sequence, forked_session_id, created_at, undone_at"
        " FROM session_rewinds WHERE id = ? AND (session_id = ? OR forked_session_id = ?)",
        (rewind_id, session_id, session_id),
    ).fetchone()
    if row is None:
        return None
    files = connection.execute(
        "SELECT path, before_digest, after_digest FROM session_rewind_files"
        " WHERE rewind_id = ? ORDER BY path",
        (rewind_id,),
    ).fetchall()
    return RewindRow(
        id=str(row[0]),
        session_id=str(row[1]),
        to_sequence=int(row[2]),
        forked_session_id=row[3],
        created_at=str(row[4]),
        undone_at=row[5],
        files=tuple(RewindFileRow(str(f[0]), f[1], f[2]) for f in files),
    )


def mark_rewind_undone(connection: Connection, rewind_id: str) -> None:
    """Note that a rewind was undone (it stays recorded)."""
    with write_transaction(connection):
        connection.execute(
            "UPDATE session_rewinds SET undone_at = ? WHERE id = ?", (utc_timestamp(), rewind_id)
        )


def copy_checkpoints(
    connection: Connection, source_id: str, target_id: str, *, below_sequence: int
) -> int:
    """Give a fork the checkpoints of the turns it kept (rows only: blobs are shared)."""
    with write_transaction(connection):
        cursor = connection.execute(
            "INSERT OR IGNORE INTO session_checkpoints (session_id, user_sequence, path,"
            " before_digest, after_digest, created_at, review)"
            " SELECT ?, user_sequence, path, before_digest, after_digest, created_at, review"
            " FROM session_checkpoints WHERE session_id = ? AND user_sequence < ?",
            (target_id, source_id, below_sequence),
        )
        return int(cursor.rowcount)


def delete_session_checkpoints(connection: Connection, session_id: str) -> int:
    """Erase a session's checkpoints and rewinds, and every blob nothing refers to any more.

    Returns how many blobs were erased.
    """
    with write_transaction(connection):
        connection.execute(
            "DELETE FROM session_rewind_files WHERE rewind_id IN"
            " (SELECT id FROM session_rewinds WHERE session_id = ?)",
            (session_id,),
        )
        connection.execute("DELETE FROM session_rewinds WHERE session_id = ?", (session_id,))
        connection.execute("DELETE FROM session_checkpoints WHERE session_id = ?", (session_id,))
        cursor = connection.execute(
            "DELETE FROM checkpoint_blobs WHERE digest NOT IN"
            " (SELECT before_digest FROM session_checkpoints WHERE before_digest IS NOT NULL"
            "  UNION SELECT before_digest FROM session_rewind_files"
            "  WHERE before_digest IS NOT NULL)"
        )
        return int(cursor.rowcount)


def blob_bytes(connection: Connection) -> int:
    """The bytes all checkpoint blobs hold (for the benchmark and diagnostics)."""
    row = connection.execute("SELECT COALESCE(SUM(size), 0) FROM checkpoint_blobs").fetchone()
    return int(row[0])
