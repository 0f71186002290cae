"""A damaged history database told from a wrong key, and a full disk said as such (issue 16).

SQLCipher reports both a wrong key and a damaged first page as "file is not a database": page
1's HMAC does not verify either way. The two need different answers — a wrong key means
"restore the key source, the file is fine"; damage means "run ``relavium-lsp recover``" — so
:func:`key_verifies_a_later_page` checks the key independently, against the HMAC of a later
page (SQLCipher 4 defaults: 4096-byte pages, 16-byte IV + 64-byte HMAC-SHA512 reserved at
the end of each page, the HMAC key derived from the raw key and the file's salt XOR 0x3a by
PBKDF2-HMAC-SHA512 with 2 iterations, the page number appended little-endian).

Any other ``DatabaseError`` ("database disk image is malformed") means the key decrypted page
1, so it is damage too. Nothing here writes to the file.

A full disk: SQLite answers a write that finds no space with SQLITE_FULL ("database or disk is
full") and rolls the transaction back: nothing committed is lost, and the same connection works
again once space returns. The user needs to hear *that* the disk is full and *which* one — not "an
internal error" with the details in a log that is on the same full disk.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import shutil
from pathlib import Path

from relavium_lsp.errors import DatabaseCorrupted, DiskFull

PAGE_SIZE = 4096
SALT_SIZE = 16
HMAC_SIZE = 64
HMAC_SALT_MASK = 0x3A
FAST_KDF_ITERATIONS = 2
KEY_SIZE = 32
PAGES_TRIED = 8  # a damaged stretch rarely spans eight pages; the key check needs one


def is_corruption(error: BaseException) -> bool:
    """Whether a SQLite/SQLCipher error says the file's content is damaged."""
    text = str(error).lower()
    name = str(getattr(error, "sqlite_errorname", ""))
    return (
        name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
        or "malformed" in text
        or "file is not a database" in text
        or "corrupt" in text
    )


def key_verifies_a_later_page(path: Path, raw_key: bytes) -> bool:
    """Whether ``raw_key`` authenticates any of pages 2…9 of ``path`` (so it is the right key)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(PAGE_SIZE * (PAGES_TRIED + 1))
    except OSError:
        return False
    if len(data) < 2 * PAGE_SIZE:
        return False
    salt = data[:SALT_SIZE]
    hmac_key = hashlib.pbkdf2_hmac(
        "sha512", raw_key, bytes(b ^ HMAC_SALT_MASK for b in salt), FAST_KDF_ITERATIONS, KEY_SIZE
    )
    for number in range(2, len(data) // PAGE_SIZE + 1):
        page = data[(number - 1) * PAGE_SIZE : number * PAGE_SIZE]
        expected = hmac.new(
            hmac_key, page[: PAGE_SIZE - HMAC_SIZE] + number.to_bytes(4, "little"), "sha512"
        ).digest()
        if hmac.compare_digest(expected, page[PAGE_SIZE - HMAC_SIZE :]):
            return True
    return False


def damage_of_unreadable_file(path: Path, raw_key: bytes, error: BaseException) -> str | None:
    """Why opening failed if it is damage (a reason for the user), else None (a wrong key)."""
    if "file is not a database" not in str(error).lower():
        return str(error)  # page 1 decrypted, something after it did not
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if size % PAGE_SIZE:
        return f"its size ({size} bytes) is not a whole number of pages: truncated or extended"
    if key_verifies_a_later_page(path, raw_key):
        return "its first page is damaged (the key is right: it opens later pages)"
    return None


def corrupted(path: Path, detail: str) -> DatabaseCorrupted:
    """The error every surface shows for a damaged history database."""
    return DatabaseCorrupted(
        f"the history database {path} is damaged ({detail}). Sessions stored in undamaged "
        "parts still open; run `relavium-lsp doctor --check` to see what is affected and "
        "`relavium-lsp recover` to copy every readable session into a fresh database (the "
        "damaged file is kept)",
        path=str(path),
    )


def is_disk_full(error: BaseException) -> bool:
    """Whether a SQLite/SQLCipher error or an ``OSError`` means "no space left"."""
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    name = str(getattr(error, "sqlite_errorname", ""))
    return name.startswith("SQLITE_FULL") or "database or disk is full" in str(error).lower()


def disk_full(path: Path) -> DiskFull:
    """The error every surface shows when the history database's disk is full."""
    try:
        free = f"{shutil.disk_usage(path.parent).free:,} bytes free"
    except OSError:
        free = "free space unknown"
    return DiskFull(
        f"the disk holding the history database {path} is full ({free}), so this was not "
        "saved; everything saved before is intact — free some space and try again (reads "
        "keep working meanwhile)",
        path=str(path),
    )
