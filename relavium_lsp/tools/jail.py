"""The scope jail: the one place every tool path is resolved and checked.

Rules, in order (:func:`resolve_in_scope`):

1. The raw path is refused if it is empty, too long, holds a NUL, a control character, a
   bidirectional-override character or a look-alike of ``.`` / ``/`` (they spoof what the
   approval prompt shows), or starts with ``~`` (never expanded — a refusal is clearer than
   a literal ``~`` directory).
2. Relative paths are relative to the workspace root. The path is resolved with
   ``os.path.realpath`` (every symlink, including the parent of a file yet to be created),
   and its NFKC-normalised spelling is resolved too, so look-alikes (fullwidth dots and
   slashes) can never mean something different to a normalising consumer.
3. The resolved path must be inside one of the tier's roots (``Path.is_relative_to`` on
   resolved roots): ``sandboxed`` = workspace + the server temp dir; ``project`` = plus
   ``allowed_paths`` (relative entries against the workspace); ``full`` = anywhere.
4. In every tier: ``/proc``, ``/sys`` and ``/dev`` are refused (``/proc/self/environ`` holds
   the server's own secrets), as are the server's private state directory, device files,
   FIFOs and sockets, and symlink loops. Writes are also refused into any ``.git`` directory
   (hooks and config there would turn a file write into code execution).

Opening is separate (:func:`open_in_scope`): ``O_NOFOLLOW`` on the final component, then the
descriptor's real path (``/proc/self/fd/N``) is re-checked, so a symlink swapped in after the
check is refused. Every refusal raises :class:`~relavium_lsp.errors.ToolDenied`.
"""

from __future__ import annotations

import os
import stat
import sys
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from relavium_lsp.contracts.session import FsScopeTier
from relavium_lsp.errors import ToolDenied, ToolError
from relavium_lsp.paths import relavium_home

MAX_PATH_CHARS = 4096
PSEUDO_FILESYSTEMS = (Path("/proc"), Path("/sys"), Path("/dev"))
_BIDI_AND_INVISIBLE = frozenset(
    "\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff"
)
# Characters that look like "." or "/" (or "\\") but are not: they make an approval
# preview read like a traversal that is not there, or hide one that is.
_LOOK_ALIKES = frozenset(
    "\u2024\u2025\u2026\ufe52\uff0e\u3002\uff61"  # dots
    "\u2215\u2044\uff0f\u29f8\u2571"  # slashes
    "\uff3c\u29f5\u29f9\u2216\ufe68"  # backslashes
)
_FD_DIRECTORY = Path("/proc/self/fd")


def _realpath(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


@dataclass(frozen=True)
class ScopeRoots:
    """The resolved roots a session's tier may touch, plus what is always off limits."""

    tier: FsScopeTier
    workspace: Path
    roots: tuple[Path, ...]
    forbidden: tuple[Path, ...]

    @classmethod
    def build(
        cls,
        working_dir: str | Path,
        tier: FsScopeTier,
        temp_dir: Path,
        allowed_paths: Iterable[str] = (),
        *,
        forbidden: Iterable[Path] | None = None,
    ) -> ScopeRoots:
        """Resolve the roots for ``tier`` once (symlinks in the roots themselves included)."""
        workspace = _realpath(working_dir)
        roots = [workspace, _realpath(temp_dir)]
        if tier == "project":
            for entry in allowed_paths:
                if entry and "\0" not in entry and not entry.startswith("~"):
                    roots.append(_realpath(workspace / entry))
        if forbidden is None:
            forbidden = (relavium_home(),)
        return cls(
            tier=tier,
            workspace=workspace,
            roots=tuple(roots),
            forbidden=tuple(_realpath(path) for path in forbidden),
        )

    def contains(self, resolved: Path) -> bool:
        """Whether an already-resolved path is inside the tier's roots."""
        if self.tier == "full":
            return True
        return any(resolved.is_relative_to(root) for root in self.roots)

    def inside_workspace(self, resolved: Path) -> bool:
        """Whether a resolved path is in the workspace or the server temp dir."""
        return any(resolved.is_relative_to(root) for root in self.roots[:2])

    def display(self, resolved: Path) -> str:
        """A short spelling for messages: relative to the workspace when inside it."""
        if resolved.is_relative_to(self.workspace):
            relative = resolved.relative_to(self.workspace).as_posix()
            return relative or "."
        return str(resolved)

    def describe(self) -> str:
        """What this tier allows, for refusal messages."""
        if self.tier == "sandboxed":
            return "the sandboxed scope (the workspace and the server temp dir)"
        if self.tier == "project":
            return "the project scope (the workspace, the server temp dir and allowed_paths)"
        return "the full scope"


def broad_root_reason(working_dir: str | Path) -> str | None:
    """Why ``working_dir`` is too broad to be a session's root, or ``None``.

    The root of the jail is the workspace: at ``/`` or the home directory a "sandboxed"
    session could reach every file (issue 35). A session may start there only when the
    client says the user chose it (``allowBroadWorkingDir``).
    """
    real = _realpath(working_dir)
    if real == Path(real.anchor):
        return "the root of the filesystem"
    if real == _realpath(Path.home()):
        return "the home directory"
    return None


def _check_raw(raw: str) -> None:
    if not raw:
        raise ToolDenied("an empty path is not allowed")
    if len(raw) > MAX_PATH_CHARS:
        raise ToolDenied(f"the path is longer than {MAX_PATH_CHARS} characters")
    if "\0" in raw:
        raise ToolDenied("the path contains a NUL byte")
    for character in raw:
        if character in _BIDI_AND_INVISIBLE or unicodedata.category(character) == "Cc":
            raise ToolDenied(
                f"the path contains the control or invisible character U+{ord(character):04X}"
            )
        if character in _LOOK_ALIKES:
            raise ToolDenied(
                f"the path contains U+{ord(character):04X}, a look-alike of '.', '/' or '\\'"
            )
    if raw.startswith("~"):
        raise ToolDenied(
            f"{raw!r}: '~' is not expanded; give a path relative to the workspace root"
        )


def _is_pseudo(resolved: Path) -> bool:
    return any(resolved.is_relative_to(root) for root in PSEUDO_FILESYSTEMS)


def _has_git_component(resolved: Path) -> bool:
    # casefold: on a case-insensitive filesystem ".GIT" is the same directory.
    return any(part.casefold() == ".git" for part in resolved.parts)


def _resolve_one(raw: str, roots: ScopeRoots) -> Path:
    candidate = Path(raw)
    if not candidate.is_absolute():
        candidate = roots.workspace / candidate
    return _realpath(candidate)


def resolve_in_scope(raw: str, roots: ScopeRoots, *, must_exist: bool, for_write: bool) -> Path:
    """Resolve a model-supplied path and prove it is inside ``roots``; see the module doc.

    Returns the resolved path. Raises :class:`ToolDenied` for every policy refusal and
    :class:`ToolError` (``tool_failed``) when ``must_exist`` and nothing is there.
    """
    _check_raw(raw)
    resolved = _resolve_one(raw, roots)
    spellings = [resolved]
    normalized = unicodedata.normalize("NFKC", raw)
    if normalized != raw:
        _check_raw(normalized)
        spellings.append(_resolve_one(normalized, roots))
    for spelling in spellings:
        if _is_pseudo(spelling):
            raise ToolDenied(f"{raw!r} is inside /proc, /sys or /dev, which tools never touch")
        if any(spelling.is_relative_to(private) for private in roots.forbidden):
            raise ToolDenied(f"{raw!r} is inside the server's private state directory")
        if not roots.contains(spelling):
            raise ToolDenied(f"{raw!r} is outside {roots.describe()}")
    if for_write and _has_git_component(resolved):
        raise ToolDenied(f"{raw!r} is inside a .git directory, which tools never write")
    try:
        status = os.stat(resolved)
    except FileNotFoundError:
        if must_exist:
            raise ToolError(f"{raw!r} does not exist") from None
        return resolved
    except NotADirectoryError:
        raise ToolError(f"{raw!r}: a parent of this path is not a directory") from None
    except OSError as error:
        # ELOOP (a symlink loop) lands here: realpath leaves the loop unresolved.
        raise ToolDenied(f"{raw!r} cannot be resolved ({error.strerror})") from None
    _check_kind(raw, status.st_mode)
    if for_write and stat.S_ISDIR(status.st_mode):
        raise ToolError(f"{raw!r} is a directory")
    return resolved


def check_write_target(path: Path, roots: ScopeRoots) -> None:
    """Prove, at the moment of writing, that ``path`` is still the file the scope allowed.

    ``path`` was resolved when the write was decided (a tool's check, a checkpoint's row).
    Every symlink of the file and of each parent is resolved again: the result must be
    ``path`` itself — a file or a directory replaced by a link since, even a link that stays
    inside the workspace, is refused — and inside the roots under the write rules of
    :func:`resolve_in_scope`. Every writer calls it: the file tools, rewind and its undo
    (issue 35; the editor follows a link, so this is the last look before the write).
    """
    label = roots.display(path)
    now = _realpath(path)
    if now != path:
        inside = roots.contains(now)
        where = f"to {roots.display(now)}" if inside else f"outside {roots.describe()}"
        raise ToolDenied(f"{label} now leads {where} through a symbolic link")
    try:
        resolve_in_scope(str(path), roots, must_exist=False, for_write=True)
    except ToolError as error:
        raise ToolDenied(f"{label} can no longer be written: {error}") from None


def _check_kind(raw: str, mode: int) -> None:
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ToolDenied(f"{raw!r} is not a regular file or directory (device, FIFO or socket)")


def descriptor_path(descriptor: int) -> Path | None:
    """The real path an open descriptor refers to, where the platform can say."""
    if sys.platform.startswith("linux"):
        try:
            return Path(os.readlink(_FD_DIRECTORY / str(descriptor)))
        except OSError:
            return None
    return None


def verify_descriptor(descriptor: int, expected: Path, roots: ScopeRoots) -> os.stat_result:
    """Re-check an opened descriptor: still a regular file/dir, still inside the roots."""
    status = os.fstat(descriptor)
    _check_kind(str(expected), status.st_mode)
    actual = descriptor_path(descriptor)
    if actual is None:
        # Without /proc, compare identities with the checked path instead.
        try:
            checked = os.stat(expected)
        except OSError:
            raise ToolDenied(f"{str(expected)!r} changed while it was being opened") from None
        if (checked.st_dev, checked.st_ino) != (status.st_dev, status.st_ino):
            raise ToolDenied(f"{str(expected)!r} changed while it was being opened")
        return status
    if (
        _is_pseudo(actual)
        or not roots.contains(actual)
        or any(actual.is_relative_to(private) for private in roots.forbidden)
    ):
        raise ToolDenied(f"{roots.display(expected)!r} moved outside the scope while opening")
    return status


def open_in_scope(resolved: Path, roots: ScopeRoots, *, directory: bool = False) -> int:
    """Open a resolved path read-only without following a final symlink, then re-verify it.

    ``O_NONBLOCK`` keeps a FIFO swapped in after the check from blocking the open; the
    descriptor check then refuses it. The caller owns (and must close) the descriptor.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    if directory:
        flags |= os.O_DIRECTORY
    try:
        descriptor = os.open(resolved, flags)
    except OSError as error:
        raise ToolDenied(
            f"{roots.display(resolved)!r} could not be opened safely ({error.strerror})"
        ) from None
    try:
        status = verify_descriptor(descriptor, resolved, roots)
        if directory != stat.S_ISDIR(status.st_mode):
            kind = "a directory" if stat.S_ISDIR(status.st_mode) else "not a directory"
            raise ToolError(f"{roots.display(resolved)!r} is {kind}")
        # Non-blocking mode was only for the open itself.
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor
