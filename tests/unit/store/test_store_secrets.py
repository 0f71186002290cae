"""No key material in any log record or exception text, across the whole key/store lifecycle."""

from __future__ import annotations

import logging
import os
import traceback
from pathlib import Path

import pytest
from store_records import make_record, text

from relavium_lsp.errors import RelaviumError
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.db import keys
from relavium_lsp.store.db.keys import DbKey, resolve_db_key
from relavium_lsp.store.sessions import SessionStore


def _forms(key: DbKey) -> list[str]:
    raw = key.raw
    return [raw.hex(), raw.hex().upper(), repr(raw), raw.decode("latin-1"), str(list(raw))]


def _record_texts(caplog: pytest.LogCaptureFixture) -> list[str]:
    texts = []
    for record in caplog.records:
        texts.append(record.getMessage())
        texts.append(repr(record.args))
        if record.exc_info:
            texts.append("".join(traceback.format_exception(*record.exc_info)))
    return texts


async def test_key_lifecycle_leaks_nothing(
    no_keyring: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    home = tmp_path / "home"
    key = resolve_db_key(home)
    resolve_db_key(home)
    failures: list[BaseException] = []

    store = await AsyncSessionStore.open(home / "history.db", key)
    record = make_record()
    await store.run(lambda s: s.create_session(record))
    await store.run(lambda s: s.append_message(record.id, "user", text("hello")))
    await store.close()

    wrong = DbKey(os.urandom(32), "file", str(home / "history.key"))
    for attempt in (
        lambda: SessionStore.open(home / "history.db", wrong),
        lambda: SessionStore.open(home / "history.db", DbKey(os.urandom(32), "env")),
    ):
        with pytest.raises(RelaviumError) as raised:
            attempt()
        failures.append(raised.value)
    with pytest.raises(RelaviumError) as async_failure:
        await AsyncSessionStore.open(home / "history.db", wrong)
    failures.append(async_failure.value)

    os.chmod(home / "history.key", 0o640)
    with pytest.raises(RelaviumError) as loose:
        resolve_db_key(home)
    failures.append(loose.value)

    monkeypatch.setenv(keys.KEY_ENV, key.raw.hex()[:-1] + "z")
    with pytest.raises(RelaviumError) as malformed:
        resolve_db_key(home)
    failures.append(malformed.value)

    texts = _record_texts(caplog)
    for failure in failures:
        texts.append(str(failure))
        texts.append(repr(failure))
        texts.append("".join(traceback.format_exception(failure)))
    texts.extend([repr(key), str(key), key.describe(), repr(wrong)])
    assert any("history.key" in line for line in texts)  # the notice and errors were captured
    for secret in _forms(key) + _forms(wrong) + [key.raw.hex()[:-1]]:
        for line in texts:
            assert secret not in line
