"""A full disk under the history database, said as such (issue 16).

SQLite answers a write that finds no space with SQLITE_FULL ("database or disk is full") and
rolls the transaction back: nothing committed is lost, and the same connection works again
once space returns. The user needs to hear *that* the disk is full and *which* one — not "an
internal error" with the details in a log that is on the same full disk.
"""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

from relavium_lsp.errors import DiskFull


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
