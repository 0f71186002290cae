"""A content-addressed store for media bytes, kept next to the history database.

Media is stored by SHA-256, so the same bytes are kept once and a handle can never point at
different content. Files are written atomically and readable only by the user.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

_HANDLE = re.compile(r"^media://sha256-([0-9a-f]{64})$")


class MediaStore:
    """Bytes by ``media://sha256-<hex>`` handle, under one directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, data: bytes) -> str:
        """Store ``data`` (idempotently) and return its handle."""
        digest = hashlib.sha256(data).hexdigest()
        target = self._path(digest)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            descriptor, temp_name = tempfile.mkstemp(dir=target.parent)
            try:
                with os.fdopen(descriptor, "wb") as handle:
                    handle.write(data)
                os.chmod(temp_name, 0o600)
                os.replace(temp_name, target)
            except BaseException:
                Path(temp_name).unlink(missing_ok=True)
                raise
        return f"media://sha256-{digest}"

    def get(self, handle: str) -> bytes:
        """Return the bytes behind ``handle``; ``KeyError`` if absent or tampered with."""
        match = _HANDLE.match(handle)
        if match is None:
            raise KeyError(f"not a media handle: {handle[:80]!r}")
        digest = match.group(1)
        try:
            data = self._path(digest).read_bytes()
        except FileNotFoundError:
            raise KeyError(f"media {handle} is not in the store") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise KeyError(f"media {handle} does not match its content hash")
        return data

    def delete(self, handle: str) -> bool:
        """Remove the bytes behind ``handle`` (a purge); ``False`` if there were none."""
        match = _HANDLE.match(handle)
        if match is None:
            return False
        try:
            self._path(match.group(1)).unlink()
        except FileNotFoundError:
            return False
        return True

    def _path(self, digest: str) -> Path:
        return self.root / digest[:2] / digest
