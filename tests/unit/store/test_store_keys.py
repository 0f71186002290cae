from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

import keyring
import pytest

from relavium_lsp.errors import DatabaseKeyError
from relavium_lsp.store.db import keys
from relavium_lsp.store.db.keys import DbKey, resolve_db_key


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _assert_no_key_material(key: DbKey, caplog: pytest.LogCaptureFixture, *texts: str) -> None:
    hex_lower = key.raw.hex()
    rendered = [record.getMessage() for record in caplog.records] + list(texts)
    for text in rendered:
        assert hex_lower not in text.lower()
        assert key.raw.hex().upper() not in text
        assert repr(key.raw) not in text
        assert key.raw.decode("latin-1") not in text


def test_db_key_never_prints_itself() -> None:
    key = DbKey(os.urandom(32), "keyring")
    for text in (repr(key), str(key), f"{key}", key.describe()):
        assert key.raw.hex() not in text
        assert repr(key.raw) not in text
    assert "hidden" in repr(key)
    with pytest.raises(ValueError):
        DbKey(b"short", "env")


def test_env_key_wins_and_is_parsed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    raw = os.urandom(32)
    monkeypatch.setenv(keys.KEY_ENV, f"  {raw.hex().upper()}\n")
    key = resolve_db_key(tmp_path / "home")
    assert key.raw == raw
    assert key.source == "env"
    # the env path touches neither the keychain nor the home directory
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize(
    "value",
    [
        "abc",
        "g" * 64,
        "0" * 63,
        "0" * 65,
        "0x" + "1" * 62,
        "12" * 16 + " " + "34" * 16,
        "secret-passphrase-that-is-not-hex-at-all-but-long-enough-to-be-64",
    ],
)
def test_malformed_env_key_is_a_clear_error_without_the_value(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv(keys.KEY_ENV, value)
    with pytest.raises(DatabaseKeyError) as raised:
        resolve_db_key(tmp_path)
    message = str(raised.value)
    assert keys.KEY_ENV in message
    assert "64 hexadecimal" in message
    assert value.strip() not in message
    assert all(value.strip() not in record.getMessage() for record in caplog.records)


def test_empty_env_key_counts_as_unset(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_keyring: None
) -> None:
    monkeypatch.setenv(keys.KEY_ENV, "   ")
    assert resolve_db_key(tmp_path / "home").source == "file"


def test_keyring_key_is_created_once_and_reused(
    plaintext_keyring: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    home = tmp_path / "home"
    first = resolve_db_key(home)
    second = resolve_db_key(home)
    assert first.source == "keyring"
    assert first.raw == second.raw
    # it really lives in the (file-backed, test-local) keyring backend
    stored = keyring.get_password(keys.KEYRING_SERVICE, keys.KEYRING_ACCOUNT)
    assert stored == first.raw.hex()
    assert list((tmp_path / "xdg-data").rglob("*.cfg"))
    assert not (home / "history.key").exists()
    assert _mode(home) == 0o700
    _assert_no_key_material(first, caplog, repr(first))


def test_keyring_entry_that_is_not_a_key_is_refused_not_overwritten(
    plaintext_keyring: None, tmp_path: Path
) -> None:
    keyring.set_password(keys.KEYRING_SERVICE, keys.KEYRING_ACCOUNT, "hunter2")
    with pytest.raises(DatabaseKeyError) as raised:
        resolve_db_key(tmp_path / "home")
    assert "hunter2" not in str(raised.value)
    assert "keychain entry" in str(raised.value)
    assert keyring.get_password(keys.KEYRING_SERVICE, keys.KEYRING_ACCOUNT) == "hunter2"


def test_existing_key_file_is_kept_when_a_keychain_appears_later(
    no_keyring: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    headless = resolve_db_key(home)
    assert headless.source == "file"
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    keyring.core.init_backend()
    later = resolve_db_key(home)
    assert later.raw == headless.raw
    assert later.source == "file"
    assert keyring.get_password(keys.KEYRING_SERVICE, keys.KEYRING_ACCOUNT) is None


def test_without_a_keychain_the_key_lives_in_a_private_file(
    no_keyring: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    home = tmp_path / "home"
    first = resolve_db_key(home)
    second = resolve_db_key(home)
    key_file = home / "history.key"
    assert first.source == "file"
    assert first.raw == second.raw
    assert key_file.read_text().strip() == first.raw.hex()
    assert _mode(key_file) == 0o600
    assert _mode(home) == 0o700
    notices = [record for record in caplog.records if "history.key" in record.getMessage()]
    assert len(notices) == 1
    assert notices[0].levelno >= logging.INFO
    assert "no usable os keychain" in notices[0].getMessage().lower()
    _assert_no_key_material(first, caplog, repr(first), first.describe())


def test_null_backend_counts_as_no_keychain(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import keyring.core

    previous = keyring.get_keyring()
    monkeypatch.delenv(keys.KEY_ENV, raising=False)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    keyring.core.init_backend()
    try:
        assert resolve_db_key(tmp_path / "home").source == "file"
    finally:
        keyring.set_keyring(previous)


def test_existing_home_is_tightened(no_keyring: None, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    os.chmod(home, 0o755)
    resolve_db_key(home)
    assert _mode(home) == 0o700


def test_key_file_readable_by_others_is_refused(no_keyring: None, tmp_path: Path) -> None:
    home = tmp_path / "home"
    key = resolve_db_key(home)
    key_file = home / "history.key"
    os.chmod(key_file, 0o644)
    with pytest.raises(DatabaseKeyError) as raised:
        resolve_db_key(home)
    message = str(raised.value)
    assert str(key_file) in message
    assert "0644" in message
    assert "chmod 600" in message
    assert key.raw.hex() not in message
    assert _mode(key_file) == 0o644  # the user decides, nothing was silently changed


def test_symlinked_key_file_is_refused(no_keyring: None, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    elsewhere = tmp_path / "attacker.key"
    elsewhere.write_text("ab" * 32)
    os.chmod(elsewhere, 0o600)
    (home / "history.key").symlink_to(elsewhere)
    with pytest.raises(DatabaseKeyError, match="not a regular file"):
        resolve_db_key(home)


def test_corrupt_key_file_is_an_error_without_its_content(no_keyring: None, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    key_file = home / "history.key"
    key_file.write_text("not-a-key-but-a-secret-value\n")
    os.chmod(key_file, 0o600)
    with pytest.raises(DatabaseKeyError) as raised:
        resolve_db_key(home)
    assert "not-a-key-but-a-secret-value" not in str(raised.value)
    assert str(key_file) in str(raised.value)


_RESOLVE_IN_CHILD = """
import sys
from pathlib import Path
from relavium_lsp.store.db.keys import resolve_db_key
print("ready", flush=True)
sys.stdin.readline()
print(resolve_db_key(Path(sys.argv[1])).raw.hex(), flush=True)
"""


def test_concurrent_first_resolution_agrees_on_one_key(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in (keys.KEY_ENV, "PYTHON_KEYRING_BACKEND")
    }
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    home = tmp_path / "home"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _RESOLVE_IN_CHILD, str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(4)
    ]
    for child in children:  # everyone has imported everything: start them together
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    outputs = [child.communicate(timeout=60) for child in children]
    assert all(child.returncode == 0 for child in children), outputs
    keys_seen = {stdout.strip() for stdout, _ in outputs}
    assert len(keys_seen) == 1
    assert (home / "history.key").read_text().strip() in keys_seen


def test_a_plaintext_keyring_is_not_used_unless_chosen(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """keyrings.alt is installed for tests, which makes it keyring's default; we refuse it."""
    import keyring

    previous = keyring.get_keyring()
    monkeypatch.delenv(keys.KEY_ENV, raising=False)
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    monkeypatch.setattr(keys, "_notices_logged", set())
    keyring.core.init_backend()
    try:
        assert keyring.get_keyring().priority < 1  # the plaintext backend is the default here
        key = keys.resolve_db_key(tmp_path / "home")
        assert key.source == "file"
        assert not (tmp_path / "xdg-data").exists()  # nothing written to the plaintext keyring
    finally:
        keyring.set_keyring(previous)
