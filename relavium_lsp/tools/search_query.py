"""What a code search asks and what it found, independent of the engine that ran it.

``search_files`` and ``find_files`` run on ripgrep (:mod:`relavium_lsp.tools.rg`) or, when no
``rg`` binary can be found, on the pure-Python worker (:mod:`relavium_lsp.tools.search_worker`).
Both take a :class:`SearchQuery` and fill a :class:`SearchOutcome` through a
:class:`HitCollector`, which applies the result and byte caps the same way, so the text the
model reads (:func:`format_outcome`) does not depend on which engine ran.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from relavium_lsp.tools.jail import PSEUDO_FILESYSTEMS, ScopeRoots

CaseMode = Literal["sensitive", "insensitive", "smart"]
OutputMode = Literal["content", "files", "count"]
StopReason = Literal["results", "bytes", "files"]

SHOWN_CHARS = 300
# A formatted hit line is its text plus about this much for the path, number and separators.
_LINE_OVERHEAD = 12
_GLOB_SPECIALS = frozenset("\\*?[]{}!")


@dataclass(frozen=True)
class SearchQuery:
    """One search, as both engines understand it.

    ``globs`` are ripgrep/gitignore globs relative to the search root (``!`` excludes);
    ``excluded`` are root-relative paths the scope forbids (never entered, whatever the
    ignore files say). ``max_results`` counts matching lines for ``content`` and files for
    ``files``/``count``; ``max_bytes`` bounds the formatted output.
    """

    pattern: str
    is_regex: bool = False
    case: CaseMode = "sensitive"
    globs: tuple[str, ...] = ()
    context: int = 0
    output: OutputMode = "content"
    include_ignored: bool = False
    max_results: int = 500
    max_bytes: int = 48_000
    max_file_bytes: int = 2 * 1024 * 1024
    excluded: tuple[str, ...] = ()

    def ignore_case(self) -> bool:
        """Whether matching ignores case (``smart``: only for an all-lowercase pattern)."""
        if self.case == "smart":
            return self.pattern == self.pattern.lower()
        return self.case == "insensitive"


@dataclass
class FileHits:
    """The hits of one file: ``(line number, text, is match, was cut)`` in line order."""

    path: str
    lines: list[tuple[int, str, bool, bool]] = field(default_factory=list)
    count: int = 0


@dataclass
class SearchOutcome:
    """Everything found, in the order the engine reported it (sorted before formatting)."""

    files: list[FileHits] = field(default_factory=list)
    matches: int = 0
    files_searched: int | None = None
    stopped: StopReason | None = None
    notes: list[str] = field(default_factory=list)


def shown(text: str) -> tuple[str, bool]:
    """A line as the model sees it: no line ending, at most :data:`SHOWN_CHARS` characters."""
    text = text.rstrip("\r\n")
    if len(text) > SHOWN_CHARS:
        return text[:SHOWN_CHARS], True
    return text, False


class HitCollector:
    """Gathers hits under the query's caps; ``full`` turns true when the engine should stop."""

    def __init__(self, query: SearchQuery) -> None:
        self.query = query
        self.outcome = SearchOutcome()
        self._bytes = 0
        self._current: FileHits | None = None

    @property
    def full(self) -> bool:
        """Whether a cap was reached (the engine stops reading)."""
        return self.outcome.stopped is not None

    def _spend(self, size: int) -> bool:
        if self._bytes + size > self.query.max_bytes:
            self.outcome.stopped = "bytes"
            return False
        self._bytes += size
        return True

    def _file(self, path: str) -> FileHits:
        if self._current is None or self._current.path != path:
            self._current = FileHits(path)
            self.outcome.files.append(self._current)
        return self._current

    def line(self, path: str, number: int, text: str, *, is_match: bool) -> None:
        """One matching or context line of ``path`` (``content`` output)."""
        if self.full:
            return
        if is_match and self.outcome.matches >= self.query.max_results:
            self.outcome.stopped = "results"
            return
        body, cut = shown(text)
        if not self._spend(len(path) + len(body) + _LINE_OVERHEAD):
            return
        hits = self._file(path)
        hits.lines.append((number, body, is_match, cut))
        if is_match:
            hits.count += 1
            self.outcome.matches += 1

    def file(self, path: str, count: int = 0) -> None:
        """One file with matches (``files``/``count`` output, and ``find_files``)."""
        if self.full:
            return
        if len(self.outcome.files) >= self.query.max_results:
            self.outcome.stopped = "results"
            return
        if not self._spend(len(path) + _LINE_OVERHEAD):
            return
        self.outcome.files.append(FileHits(path, count=count))
        self.outcome.matches += count


def scope_exclusions(root: Path, roots: ScopeRoots) -> tuple[str, ...]:
    """Paths below ``root`` that no tool may read in any tier, relative to ``root``.

    The server's own state directory, protected paths and ``/proc``/``/sys``/``/dev`` (the
    ``full`` tier can search ``/``). Symlinks are never followed, so nothing else below a
    jailed root can be out of scope.
    """
    excluded = []
    for blocked in (*PSEUDO_FILESYSTEMS, *roots.forbidden):
        if blocked != root and blocked.is_relative_to(root):
            excluded.append(blocked.relative_to(root).as_posix())
    return tuple(sorted(set(excluded)))


def escape_glob(text: str) -> str:
    """A literal path as a ripgrep/gitignore glob (every special character escaped)."""
    return "".join(f"\\{c}" if c in _GLOB_SPECIALS else c for c in text)


def display_prefix(root_label: str) -> str:
    """What goes before a root-relative path so it reads relative to the workspace."""
    if root_label in ("", "."):
        return ""
    return root_label.rstrip("/") + "/"


def _plural(count: int, word: str) -> str:
    suffix = "" if count == 1 else ("es" if word.endswith("ch") else "s")
    return f"{count:,} {word}{suffix}"


def _stop_note(outcome: SearchOutcome, query: SearchQuery, what: str) -> str:
    if outcome.stopped == "results":
        return f"; stopped at the limit of {query.max_results:,} {what}, narrow path or glob"
    if outcome.stopped == "bytes":
        return f"; stopped at the {query.max_bytes:,}-byte output limit, narrow path or glob"
    return ""


def format_outcome(outcome: SearchOutcome, query: SearchQuery, where: str) -> str:
    """The model-facing text of a ``search_files`` run.

    ``path:line: text`` for matches, ``path-line- text`` for context lines and ``--``
    between separate groups (ripgrep's conventions); paths are relative to the workspace.
    """
    files = sorted(outcome.files, key=lambda hits: hits.path)
    lines: list[str] = []
    if query.output == "content":
        for hits in files:
            previous: int | None = None
            for number, text, is_match, cut in hits.lines:
                if query.context and previous is not None and number > previous + 1:
                    lines.append("--")
                mark = ":" if is_match else "-"
                lines.append(f"{hits.path}{mark}{number}{mark} {text}{' …' if cut else ''}")
                previous = number
            if query.context and hits is not files[-1]:
                lines.append("--")
    elif query.output == "files":
        lines = [hits.path for hits in files]
    else:
        lines = [f"{hits.path}: {hits.count:,}" for hits in files]
    summary = f"[{_plural(outcome.matches, 'match')} in {_plural(len(files), 'file')} in {where}"
    if query.output == "files":
        summary = f"[{_plural(len(files), 'file')} with matches in {where}"
    if outcome.files_searched is not None:
        summary += f"; {_plural(outcome.files_searched, 'file')} searched"
    what = "files" if query.output != "content" else "matches"
    summary += _stop_note(outcome, query, what)
    for note in outcome.notes:
        summary += f"; {note}"
    summary += "]"
    if not lines:
        return f"No matches.\n{summary}"
    return "\n".join([*lines, summary])


def format_files(outcome: SearchOutcome, query: SearchQuery, where: str) -> str:
    """The model-facing text of a ``find_files`` run: one workspace-relative path a line."""
    paths = sorted(hits.path for hits in outcome.files)
    summary = f"[{_plural(len(paths), 'file')} matching {query.pattern!r} in {where}"
    summary += _stop_note(outcome, query, "files")
    summary += "]"
    if not paths:
        return f"No files found.\n{summary}"
    return "\n".join([*paths, summary])


def relative_record(raw: bytes) -> str:
    """A path an engine printed (``./a/b``), decoded and without the leading ``./``."""
    text = os.fsdecode(raw) if raw else ""
    return strip_dot(text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))


def strip_dot(text: str) -> str:
    """``./a/b`` as ``a/b``."""
    while text.startswith("./"):
        text = text[2:]
    return text
