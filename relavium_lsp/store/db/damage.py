"""Telling a damaged history database from a wrong key (issue 16).

SQLCipher reports both a wrong key and a damaged first page as "file is not a database": page
1's HMAC does not verify either way. The two need different answers — a wrong key means
"restore the key source, the file is fine"; damage means "run ``relavium-lsp recover``" — so
:func:`key_verifies_a_later_page` checks the key independently, against the HMAC of a later
page (SQLCipher 4 defaults: 4096-byte pages, 16-byte IV + 64-byte HMAC-SHA512 reserved at
the end of each page, the HMAC key derived from the raw key and the file's salt XOR 0x3a by
PBKDF2-HMAC-SHA512 with 2 iterations, the page number appended little-endian).

Any other ``DatabaseError`` ("database disk image is malformed") means the key decrypted page
1, so it is damage too. Nothing here writes to the file.
"""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

from relavium_lsp.errors import DatabaseCorrupted

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
