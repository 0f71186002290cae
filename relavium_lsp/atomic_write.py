"""Replacing a file's text atomically: a reader sees the old file or the new one, never half.

Shared by everything that writes a whole file — the filesystem editor host, the LSP host's
opt-in disk writes, cassette recording, CLI exports and the demo — so no layer reaches into
another (say, the providers into the tools) for a helper.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` via a sibling temp file and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        if path.exists():
            os.chmod(temp_name, path.stat().st_mode & 0o777)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
