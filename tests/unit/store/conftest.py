from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.core
import pytest
from store_records import make_record

from relavium_lsp.store.db import keys
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.sessions import SessionStore


@pytest.fixture
def db_key() -> DbKey:
    return DbKey(os.urandom(32), "env")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "history.db"


@pytest.fixture
def store(db_path: Path, db_key: DbKey) -> Iterator[SessionStore]:
    opened = SessionStore.open(db_path, db_key)
    yield opened
    opened.close()


@pytest.fixture
def session_id(store: SessionStore) -> str:
    record = make_record()
    store.create_session(record)
    return record.id


def _use_backend(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, backend: str) -> Iterator[None]:
    """Select a real keyring backend through the environment, like a user would."""
    previous = keyring.get_keyring()
    monkeypatch.delenv(keys.KEY_ENV, raising=False)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", backend)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    monkeypatch.setattr(keys, "_notices_logged", set())
    keyring.core.init_backend()
    try:
        yield
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def plaintext_keyring(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    yield from _use_backend(monkeypatch, tmp_path, "keyrings.alt.file.PlaintextKeyring")


@pytest.fixture
def no_keyring(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    yield from _use_backend(monkeypatch, tmp_path, "keyring.backends.fail.Keyring")
