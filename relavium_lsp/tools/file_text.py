r"""A file's text as an editor holds it, and writing it back byte for byte (issue 35).

One reading and one writing rule for every file the agent changes, open in the editor or not:

- **Reading** (:func:`decode_file_text`, :func:`read_file_text`): strict UTF-8, a byte-order
  mark set aside (editors hide it and keep it on save), line endings untouched — never
  ``read_text()``, whose newline translation made the server compute an edit's positions on
  text the file does not hold (a CRLF file ended ``gamma\r\r\n``).
- **Writing to disk** (:func:`write_file_text`, :func:`delete_file`), for clients that cannot
  apply workspace edits and for the filesystem host: atomic (a sibling temp file renamed over
  the file, its mode kept), the file's BOM kept, and **never through a symlink**. The parent
  directory is opened without following a link and its real path (``/proc/self/fd``) must be
  the parent the caller checked, so a parent swapped for a link to elsewhere since the scope
  check is refused; a name that is now a link (or not a regular file) is refused too, and the
  rename replaces the directory entry itself. The scope rule the caller applies first is
  :func:`~relavium_lsp.tools.jail.check_write_target`.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from relavium_lsp.errors import ToolDenied, ToolError
from relavium_lsp.tools.jail import descriptor_path

UTF8_BOM = b"\xef\xbb\xbf"
_BINARY_PROBE = 8192
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def decode_file_text(data: bytes, label: str) -> str:
    """File bytes as the text an editor shows: UTF-8, BOM set aside, line endings as they are."""
    if b"\0" in data[:_BINARY_PROBE]:
        raise ToolError(f"{label!r} is a binary file ({len(data):,} bytes); it cannot be read")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{label!r} is not UTF-8 text ({len(data):,} bytes)") from None
    return text.removeprefix("\ufeff")


def read_file_text(path: Path) -> str | None:
    """:func:`decode_file_text` of a file on disk; ``None`` when there is none."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return decode_file_text(data, path.name)


def _open_parent(path: Path) -> int:
    """The parent directory's descriptor, proven to be ``path.parent`` itself (no link)."""
    try:
        descriptor = os.open(path.parent, _DIRECTORY_FLAGS)
    except OSError as error:
        raise ToolDenied(
            f"{path.parent} cannot be opened without following a link ({error.strerror})"
        ) from None
    actual = descriptor_path(descriptor)
    if actual is None:  # no /proc: compare identities with the path as named
        status, named = os.fstat(descriptor), os.stat(path.parent)
        same = (status.st_dev, status.st_ino) == (named.st_dev, named.st_ino)
    else:
        same = actual == path.parent
    if not same:
        os.close(descriptor)
        raise ToolDenied(f"{path.parent} now leads elsewhere through a symbolic link")
    return descriptor


def _existing(directory: int, name: str) -> os.stat_result | None:
    """The entry's own status (a link is not followed); ``None`` when absent."""
    try:
        status = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(status.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(status.st_mode) else "not a regular file"
        raise ToolDenied(f"{name} is now {kind}; it was not written")
    return status


def _has_bom(directory: int, name: str) -> bool:
    descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory)
    try:
        return os.read(descriptor, len(UTF8_BOM)) == UTF8_BOM
    finally:
        os.close(descriptor)


def write_file_text(path: Path, text: str) -> None:
    """Replace (or create) ``path`` with ``text``: atomic, BOM and mode kept, no link followed.

    ``path`` is absolute and resolved (the caller checked it against the scope). Missing
    parent directories are created first.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    directory = _open_parent(path)
    try:
        existing = _existing(directory, path.name)
        bom = existing is not None and _has_bom(directory, path.name)
        data = (UTF8_BOM if bom else b"") + text.encode("utf-8")
        temp = f".{path.name}.{secrets.token_hex(6)}.tmp"
        mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o666
        descriptor = os.open(temp, _NEW_FILE_FLAGS, mode, dir_fd=directory)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                if existing is not None:
                    os.fchmod(handle.fileno(), mode)  # exactly the old mode, past the umask
            os.replace(temp, path.name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=directory)
            except FileNotFoundError:
                pass
            raise
    finally:
        os.close(directory)


def delete_file(path: Path) -> None:
    """Remove ``path`` (absent counts as removed) without following a link of its parent."""
    try:
        directory = _open_parent(path)
    except ToolDenied:
        if not path.parent.exists():
            return  # the whole directory is gone: so is the file
        raise
    try:
        if _existing(directory, path.name) is not None:
            os.unlink(path.name, dir_fd=directory)
    finally:
        os.close(directory)
