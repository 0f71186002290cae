"""Writing an export into one exports folder — and nowhere else.

Used when the editor cannot open an untitled document: the server writes the export into the
workspace's ``.relavium/exports/`` and asks the editor to show it, or — when the editor cannot
show a document either — into ``exports/`` in relavium's data directory, never the user's
repository. The folder is resolved (symlinks included) and must lie inside its root; the
file is created with ``O_EXCL | O_NOFOLLOW`` relative to the folder's descriptor, so an
existing file — or a symlink planted where the file would go — is never written through. A
name that is taken by different content gets a ``-2``, ``-3``… suffix; the same content
already there is simply reused.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path

from relavium_lsp.errors import ExportError

EXPORTS_DIR = Path(".relavium") / "exports"
MAX_SUFFIX = 1000
_SAFE_STEM = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_SAFE_SUFFIX = re.compile(r"^(\.[a-z0-9][a-z0-9-]*){1,2}$")


def exports_dir(working_dir: str) -> Path:
    """Where a workspace's exports go (not resolved, not created)."""
    return Path(working_dir) / EXPORTS_DIR


def write_export_file(
    working_dir: str, stem: str, suffix: str, content: str, *, folder: Path = EXPORTS_DIR
) -> Path:
    """Write ``<working_dir>/<folder>/<stem><suffix>`` (or a suffixed variant); its path."""
    if not _SAFE_STEM.match(stem) or not _SAFE_SUFFIX.match(suffix):
        raise ExportError(f"refusing an unsafe export file name {stem + suffix!r}")
    root = Path(os.path.realpath(working_dir))
    if not root.is_dir():
        raise ExportError(f"the folder {working_dir} does not exist")
    resolved = _inside_folder(root, folder)
    data = content.encode("utf-8")
    directory = os.open(resolved, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for attempt in range(1, MAX_SUFFIX + 1):
            name = f"{stem}{suffix}" if attempt == 1 else f"{stem}-{attempt}{suffix}"
            if _create(directory, name, data) or _holds(directory, name, data):
                return resolved / name
    finally:
        os.close(directory)
    raise ExportError(f"too many exports named {stem}{suffix} in {resolved}")


def _inside_folder(root: Path, relative: Path) -> Path:
    """Create ``relative`` step by step, checking each step stays in ``root``.

    Checking before creating matters: ``mkdir -p`` through a planted ``.relavium`` symlink
    would already have made a directory outside the workspace.
    """
    folder = root
    for part in relative.parts:
        step = folder / part
        try:
            if not os.path.lexists(step):
                step.mkdir()
        except OSError as error:
            raise ExportError(f"cannot create {step}: {error.strerror}") from None
        folder = Path(os.path.realpath(step))
        if not folder.is_relative_to(root) or not folder.is_dir():
            raise ExportError(f"{step} leads outside {root}; the export was not written")
    return folder


def _create(directory: int, name: str, data: bytes) -> bool:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        descriptor = os.open(name, flags, 0o666, dir_fd=directory)
    except FileExistsError:
        return False
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=directory)
        raise
    return True


def _holds(directory: int, name: str, data: bytes) -> bool:
    """Whether ``name`` is a regular file (not a link) whose bytes are exactly ``data``."""
    try:
        # O_NONBLOCK: a FIFO planted under the name must not hang the server on open.
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        descriptor = os.open(name, flags, dir_fd=directory)
    except OSError:
        return False
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode) or status.st_size != len(data):
            return False
        return handle.read() == data
