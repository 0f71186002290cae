"""Workspace memory revisions in a real SQLCipher file (§2.6, migration 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from relavium_lsp.errors import MemoryConflict
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.rows.workspace_memory import (
    KEEP_REVISIONS,
    newest_revisions,
    read_memory,
    update_memory,
    write_memory,
)
from relavium_lsp.store.sessions import SessionStore


def test_compare_and_swap_keeps_the_newest_revisions(store: SessionStore) -> None:
    assert read_memory(store.connection, "/w").revision == 0
    first = write_memory(store.connection, "/w", "one", base_revision=0, source="user")
    assert (first.revision, first.text, first.source) == (1, "one", "user")
    with pytest.raises(MemoryConflict) as stale:
        write_memory(store.connection, "/w", "lost", base_revision=0, source="user")
    assert stale.value.current_revision == 1
    assert read_memory(store.connection, "/w").text == "one"
    for revision in range(2, KEEP_REVISIONS + 5):
        write_memory(
            store.connection, "/w", f"v{revision}", base_revision=revision - 1, source="user"
        )
    kept = read_memory(store.connection, "/w")
    assert kept.revision == KEEP_REVISIONS + 4
    assert [entry.revision for entry in kept.history] == list(range(KEEP_REVISIONS + 4, 4, -1))
    assert read_memory(store.connection, "/other").revision == 0


def test_update_is_a_read_modify_write(store: SessionStore) -> None:
    write_memory(store.connection, "/w", "base", base_revision=0, source="user")
    assert update_memory(store.connection, "/w", lambda text: None, source="introspection") is None
    assert update_memory(store.connection, "/w", lambda text: text, source="introspection") is None
    merged = update_memory(
        store.connection, "/w", lambda text: text + " more", source="introspection", session_id="s1"
    )
    assert merged is not None
    assert (merged.revision, merged.text, merged.session_id) == (2, "base more", "s1")
    assert newest_revisions(store.connection) == {"/w": (2, "introspection")}


def test_memory_survives_reopening(db_path: Path, db_key: DbKey) -> None:
    opened = SessionStore.open(db_path, db_key)
    write_memory(opened.connection, "/w", "the otter convention", base_revision=0, source="user")
    opened.close()
    again = SessionStore.open(db_path, db_key)
    try:
        assert read_memory(again.connection, "/w").text == "the otter convention"
    finally:
        again.close()
    raw = b"".join(p.read_bytes() for p in db_path.parent.glob("history.db*"))
    assert b"otter" not in raw
