"""The model a session was switched to, kept in its row (``store/rows/model_choice.py``)."""

from __future__ import annotations

from pathlib import Path

from store_records import make_record, text

from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.rows.model_choice import load_model_choice, save_model_choice
from relavium_lsp.store.sessions import SessionStore


def test_a_choice_is_kept_across_reopening_and_names_the_sessions_model(
    db_path: Path, db_key: DbKey
) -> None:
    store = SessionStore.open(db_path, db_key)
    record = make_record()
    store.create_session(record)
    assert load_model_choice(store.connection, record.id) is None
    save_model_choice(store.connection, record.id, "loop/gpt-4.1", "gpt-4.1")
    store.close()

    reopened = SessionStore.open(db_path, db_key)
    assert load_model_choice(reopened.connection, record.id) == "loop/gpt-4.1"
    stored = reopened.get_session(record.id)
    assert stored is not None and stored.model_id == "gpt-4.1"
    assert load_model_choice(reopened.connection, "no-such-session") is None
    reopened.close()


def test_a_fork_asks_the_model_its_source_was_switched_to(db_path: Path, db_key: DbKey) -> None:
    store = SessionStore.open(db_path, db_key)
    source, plain = make_record(), make_record()
    for record in (source, plain):
        store.create_session(record)
        store.append_message(record.id, "user", text("hi"))
    save_model_choice(store.connection, source.id, "loop/gpt-4.1", "gpt-4.1")
    fork, other = make_record(), make_record()
    store.fork_session(source.id, 1, fork)
    store.fork_session(plain.id, 1, other)
    assert load_model_choice(store.connection, fork.id) == "loop/gpt-4.1"
    assert load_model_choice(store.connection, other.id) is None
    store.close()
