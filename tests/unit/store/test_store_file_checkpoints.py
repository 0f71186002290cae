"""File checkpoints in the store: first change only, deduplicated blobs, erased with the session."""

from __future__ import annotations

from store_records import make_record

from relavium_lsp.store.rows import file_checkpoints as fc
from relavium_lsp.store.sessions import SessionStore


def blob_count(store: SessionStore) -> int:
    return int(store.connection.execute("SELECT COUNT(*) FROM checkpoint_blobs").fetchone()[0])


def test_only_the_first_change_of_a_turn_is_kept(store: SessionStore, session_id: str) -> None:
    connection = store.connection
    assert fc.record_before(connection, session_id, 1, "/w/a.py", "one\n") is True
    assert fc.record_before(connection, session_id, 1, "/w/a.py", "two\n") is False
    fc.record_after(connection, session_id, 1, "/w/a.py", "three\n")
    assert fc.record_before(connection, session_id, 5, "/w/a.py", "three\n") is True
    assert fc.record_before(connection, session_id, 5, "/w/new.py", None) is True
    rows = fc.list_checkpoints(connection, session_id)
    assert [(r.user_sequence, r.path, r.size) for r in rows] == [
        (1, "/w/a.py", 4),
        (5, "/w/a.py", 6),
        (5, "/w/new.py", None),
    ]
    assert rows[0].before_digest == fc.text_digest("one\n")
    assert rows[0].after_digest == fc.text_digest("three\n") == rows[1].before_digest
    assert rows[2].before_digest is None
    assert [
        r.user_sequence for r in fc.list_checkpoints(connection, session_id, from_sequence=2)
    ] == [
        5,
        5,
    ]
    loaded = fc.load_blobs(connection, [rows[0].before_digest or "", rows[1].before_digest or ""])
    assert sorted(loaded.values()) == ["one\n", "three\n"]


def test_blobs_are_shared_and_erased_with_the_last_session_using_them(
    store: SessionStore, session_id: str
) -> None:
    other = make_record()
    store.create_session(other)
    connection = store.connection
    fc.record_before(connection, session_id, 1, "/w/a.py", "same text\n")
    fc.record_before(connection, other.id, 1, "/w/a.py", "same text\n")
    fc.record_before(connection, other.id, 1, "/w/b.py", "only in the other\n")
    assert blob_count(store) == 2
    assert fc.blob_bytes(connection) == len("same text\n") + len("only in the other\n")

    assert fc.delete_session_checkpoints(connection, other.id) == 1  # b.py's blob
    assert blob_count(store) == 1 and fc.list_checkpoints(connection, other.id) == []
    assert fc.delete_session_checkpoints(connection, session_id) == 1
    assert blob_count(store) == 0


def test_a_fork_gets_the_earlier_turns_checkpoints_without_copying_blobs(
    store: SessionStore, session_id: str
) -> None:
    fork = make_record()
    store.create_session(fork)
    connection = store.connection
    fc.record_before(connection, session_id, 1, "/w/a.py", "first\n")
    fc.record_before(connection, session_id, 7, "/w/a.py", "second\n")
    assert fc.copy_checkpoints(connection, session_id, fork.id, below_sequence=7) == 1
    assert [r.user_sequence for r in fc.list_checkpoints(connection, fork.id)] == [1]
    assert blob_count(store) == 2
    fc.delete_session_checkpoints(connection, session_id)
    assert blob_count(store) == 1  # the fork still needs "first\n"
