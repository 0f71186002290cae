"""The history database key (``docs/design.md`` §7): where it comes from, kept out of sight.

Precedence, first match wins:

1. ``RELAVIUM_DB_KEY`` — exactly 64 hex characters (surrounding whitespace ignored; an empty
   value counts as unset). Anything else is an error that never echoes the value.
2. The OS keychain through :mod:`keyring` — service ``relavium``, account ``history-db-key``.
3. ``<home>/history.key`` — a 0600 file, used when no usable keychain backend exists
   (headless Linux, CI). The server logs one notice per process saying so.

Two refinements keep an existing database openable:

- When the keychain works but holds no entry while ``history.key`` already exists (the machine
  was headless when the database was created and a keychain appeared later), the file is used
  rather than minting a new key that could never decrypt the existing database.
- First-time creation happens under an advisory lock in the home directory, so two server
  processes starting together agree on one key.

A key file that is a symlink, is owned by someone else, or grants any permission to group or
other is refused (like ``ssh`` refuses a private key): the key may already have leaked, so the
user decides — the error says how to fix the mode.

Key material never appears in a log record, an exception message or a ``repr``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import keyring.errors

from relavium_lsp.errors import DatabaseKeyError
from relavium_lsp.keychain import usable_keychain
from relavium_lsp.log_secrets import register_secret
from relavium_lsp.paths import KEY_FILE_NAME, PRIVATE_FILE_MODE, ensure_private_dir

logger = logging.getLogger(__name__)

KEY_ENV = "RELAVIUM_DB_KEY"
KEYRING_SERVICE = "relavium"
KEYRING_ACCOUNT = "history-db-key"
KEY_BYTES = 32
_HEX_LENGTH = KEY_BYTES * 2
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_LOCK_FILE_NAME = ".history.key.lock"

KeySource = Literal["env", "keyring", "file"]

_notice_lock = threading.Lock()
_notices_logged: set[str] = set()


@dataclass(frozen=True, repr=False)
class DbKey:
    """A 32-byte SQLCipher key and where it came from; it never prints itself."""

    raw: bytes
    source: KeySource
    location: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if len(self.raw) != KEY_BYTES:
            raise ValueError(f"a database key is {KEY_BYTES} bytes long")
        # Known from now on: redacted from logs, refused as a context variable.
        register_secret(self.raw.hex())

    def __repr__(self) -> str:
        return f"DbKey(source={self.source!r}, raw=<{KEY_BYTES} bytes hidden>)"

    __str__ = __repr__

    def describe(self) -> str:
        """A user-facing description of where the key came from (never the key)."""
        if self.source == "env":
            return f"the {KEY_ENV} environment variable"
        if self.source == "keyring":
            return f"the OS keychain (service {KEYRING_SERVICE!r}, account {KEYRING_ACCOUNT!r})"
        return f"the key file {self.location}" if self.location else "the key file"

    def sqlcipher_pragma_value(self) -> str:
        """The value for ``PRAGMA key``: a raw-key blob literal, so no KDF runs."""
        return f"\"x'{self.raw.hex()}'\""


def resolve_db_key(home: Path) -> DbKey:
    """Find (or create once) the database key following the module's precedence.

    May block on the OS keychain (an unlock prompt), so call it off the event loop.
    """
    from_env = os.environ.get(KEY_ENV)
    if from_env is not None and from_env.strip():
        return DbKey(_parse_hex(from_env, what=f"{KEY_ENV}"), "env", KEY_ENV)
    ensure_private_dir(home)
    key_file = home / KEY_FILE_NAME
    backend = usable_keychain()
    if backend is None:
        return _file_key(key_file, home, notice="no-backend")
    try:
        stored = _keychain_get(backend)
    except keyring.errors.KeyringError as error:
        logger.warning("The OS keychain failed (%s); falling back to a key file.", _kind(error))
        return _file_key(key_file, home, notice="no-backend")
    if stored is not None:
        return _keychain_key(stored)
    if _exists(key_file):
        return _file_key(key_file, home, notice="existing-file")
    with _creation_lock(home):
        return _create_in_keychain(backend, key_file, home)


def _create_in_keychain(backend: Any, key_file: Path, home: Path) -> DbKey:
    # Re-check under the lock: another process may have won the race to create the key.
    try:
        stored = _keychain_get(backend)
        if stored is not None:
            return _keychain_key(stored)
        if _exists(key_file):
            return _file_key(key_file, home, notice="existing-file", locked=True)
        fresh = secrets.token_bytes(KEY_BYTES)
        backend.set_password(KEYRING_SERVICE, KEYRING_ACCOUNT, fresh.hex())
        stored = _keychain_get(backend)
    except keyring.errors.KeyringError as error:
        logger.warning("The OS keychain failed (%s); falling back to a key file.", _kind(error))
        return _file_key(key_file, home, notice="no-backend", locked=True)
    if stored is None:
        # The backend accepted the write but does not return it: it keeps nothing.
        return _file_key(key_file, home, notice="no-backend", locked=True)
    return _keychain_key(stored)


def _keychain_get(backend: Any) -> str | None:
    value = backend.get_password(KEYRING_SERVICE, KEYRING_ACCOUNT)
    return value if isinstance(value, str) else None


def _keychain_key(stored: str) -> DbKey:
    what = f"the keychain entry {KEYRING_SERVICE}/{KEYRING_ACCOUNT}"
    return DbKey(_parse_hex(stored, what=what), "keyring", f"{KEYRING_SERVICE}/{KEYRING_ACCOUNT}")


def _file_key(key_file: Path, home: Path, *, notice: str, locked: bool = False) -> DbKey:
    if not _exists(key_file):
        if locked:
            _write_new_key_file(key_file)
        else:
            with _creation_lock(home):
                if not _exists(key_file):
                    _write_new_key_file(key_file)
    key = DbKey(_read_key_file(key_file), "file", str(key_file))
    _notice_once(notice, key_file)
    return key


def _notice_once(kind: str, key_file: Path) -> None:
    with _notice_lock:
        if kind in _notices_logged:
            return
        _notices_logged.add(kind)
    # INFO, not WARNING: it is the documented headless behaviour, said once in the log file;
    # an editor shows a server's stderr to the user on every start.
    if kind == "no-backend":
        logger.info(
            "No usable OS keychain backend is available, so the history database key is kept "
            "in %s (mode 0600).",
            key_file,
        )
    else:
        logger.info(
            "The OS keychain has no history database key; using the existing key file %s.",
            key_file,
        )


def _write_new_key_file(key_file: Path) -> None:
    descriptor, temp_name = tempfile.mkstemp(dir=key_file.parent, prefix=".history.key.")
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as handle:
            os.fchmod(handle.fileno(), PRIVATE_FILE_MODE)
            handle.write(secrets.token_bytes(KEY_BYTES).hex() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        # A hard link creates the name only if it is absent and only with complete content;
        # if another process won the race, its key is the one everybody reads.
        with contextlib.suppress(FileExistsError):
            os.link(temp_name, key_file)
    finally:
        Path(temp_name).unlink(missing_ok=True)


def _read_key_file(key_file: Path) -> bytes:
    info = os.lstat(key_file)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise DatabaseKeyError(f"the key file {key_file} is not a regular file; refusing to use it")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise DatabaseKeyError(f"the key file {key_file} belongs to another user; refusing it")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise DatabaseKeyError(
            f"the key file {key_file} is accessible to other users (mode {mode:04o}); the key "
            f"may have leaked. If you accept that, run: chmod 600 '{key_file}'"
        )
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(key_file, flags)
    with os.fdopen(descriptor, "r", encoding="ascii", errors="replace") as handle:
        content = handle.read(4096)
    return _parse_hex(content, what=f"the key file {key_file}")


def _parse_hex(value: str, *, what: str) -> bytes:
    candidate = value.strip()
    if len(candidate) != _HEX_LENGTH or not set(candidate) <= _HEX_DIGITS:
        raise DatabaseKeyError(
            f"{what} must hold exactly {_HEX_LENGTH} hexadecimal characters "
            f"(a {KEY_BYTES}-byte key); the value was not shown"
        )
    return bytes.fromhex(candidate)


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def _kind(error: BaseException) -> str:
    # Only the type: a backend's message could quote what it was handed.
    return type(error).__name__


@contextlib.contextmanager
def _creation_lock(home: Path) -> Iterator[None]:
    """Serialise first-time key creation across processes (advisory; POSIX only)."""
    if sys.platform == "win32":
        yield
        return
    import fcntl

    descriptor = os.open(home / _LOCK_FILE_NAME, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)
