r"""The pure-Python stand-in for ripgrep, used only when no ``rg`` binary can be found.

A standard-library-only child process (Python's ``re`` cannot be interrupted, so a
pathological pattern must cost at most the timeout that kills this process group). It speaks
the subset of ripgrep's output :mod:`relavium_lsp.tools.rg` reads — ``--json`` records for
``content``, NUL-ended paths for ``files`` and the ``find_files`` listing, ``path\0N`` lines
for ``count`` — so the parent parses, caps and stops both engines the same way.

Protocol: ``argv[1]`` is one JSON request (the query's fields, ``mode`` ``grep`` or ``files``
and ``target``: ``./`` for the working directory, which the parent made the jailed root's
verified descriptor, or ``fd:N:LABEL`` for one file's verified descriptor). The walk opens
every entry relative to its parent's descriptor with ``O_NOFOLLOW`` and never follows a
symlink. Like ripgrep it honours
``.gitignore``, ``.ignore`` and ``.rgignore`` files below the root (a useful subset of their
syntax: ``!`` negation, anchored and directory-only patterns, ``*``, ``?``, ``**``, classes),
searches hidden files, skips ``.git``, binary and over-large files. A bad pattern is reported
on stderr as ``regex parse error`` with exit code 2, as ripgrep does.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from typing import Any

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")
_BINARY_PROBE = 8192


def translate(pattern: str) -> tuple[re.Pattern[str], bool] | None:
    """A gitignore-style pattern as a regex over root-relative paths, and "directories only"."""
    directory_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    if not pattern:
        return None
    anchored = "/" in pattern
    pattern = pattern.lstrip("/")
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(prefix + "".join(out) + "(?:/.*)?$"), directory_only


class _Rules:
    """Ordered ignore rules; the last rule that matches a path decides."""

    def __init__(self) -> None:
        self.rules: list[tuple[str, re.Pattern[str], bool, bool]] = []

    def add(self, base: str, text: str) -> None:
        for raw in text.splitlines():
            line = raw.rstrip()
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            if negated:
                line = line[1:]
            if line.startswith("\\"):
                line = line[1:]
            translated = translate(line)
            if translated is not None:
                self.rules.append((base, translated[0], negated, translated[1]))

    def ignored(self, relative: str, is_directory: bool) -> bool:
        for base, regex, negated, directory_only in reversed(self.rules):
            if not relative.startswith(base):
                continue
            if directory_only and not is_directory:
                continue
            if regex.match(relative[len(base) :]):
                return not negated
        return False


class _Globs:
    """``--glob`` overrides: positive globs whitelist files, ``!`` globs exclude anything."""

    def __init__(self, globs: list[str], excluded: list[str]) -> None:
        self.include: list[re.Pattern[str]] = []
        self.exclude: list[re.Pattern[str]] = []
        for glob in globs:
            negated = glob.startswith("!")
            translated = translate(glob[1:] if negated else glob)
            if translated is not None:
                (self.exclude if negated else self.include).append(translated[0])
        self.excluded = excluded

    def skip(self, relative: str, is_directory: bool) -> bool:
        if any(relative == path or relative.startswith(path + "/") for path in self.excluded):
            return True
        if any(regex.match(relative) for regex in self.exclude):
            return True
        if is_directory or not self.include:
            return False
        return not any(regex.match(relative) for regex in self.include)


class _Search:
    def __init__(self, request: dict[str, Any]) -> None:
        self.request = request
        self.mode: str = request["mode"]
        self.output: str = request.get("output", "content")
        self.context: int = request.get("context", 0)
        self.max_file_bytes: int = request["maxFileBytes"]
        self.use_ignore_files = not request.get("includeIgnored", False)
        self.globs = _Globs(request.get("globs", []), request.get("excluded", []))
        self.rules = _Rules()
        self.searched = 0
        self.regex: re.Pattern[str] | None = None
        if self.mode == "grep":
            pattern = request["pattern"]
            source = pattern if request.get("isRegex") else re.escape(pattern)
            self.regex = re.compile(source, re.IGNORECASE if request.get("ignoreCase") else 0)

    def emit(self, text: str) -> None:
        sys.stdout.write(text)

    def record(self, kind: str, path: str, number: int, line: str) -> None:
        data = {"path": {"text": path}, "lines": {"text": line}, "line_number": number}
        self.emit(json.dumps({"type": kind, "data": data}) + "\n")

    def scan(self, descriptor: int, relative: str) -> None:
        if self.mode == "files":
            self.emit(relative + "\0")
            return
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode) or status.st_size > self.max_file_bytes:
            return
        with os.fdopen(os.dup(descriptor), "rb") as handle:
            data = handle.read(self.max_file_bytes + 1)
        self.searched += 1
        if b"\0" in data[:_BINARY_PROBE]:
            return
        assert self.regex is not None
        lines = data.decode("utf-8", errors="replace").splitlines()
        hits = [index for index, line in enumerate(lines) if self.regex.search(line)]
        if not hits:
            return
        if self.output == "files":
            self.emit(relative + "\0")
        elif self.output == "count":
            count = sum(len(self.regex.findall(lines[index])) for index in hits)
            self.emit(f"{relative}\0{count}\n")
        else:
            self._content(relative, lines, hits)
        sys.stdout.flush()

    def _content(self, relative: str, lines: list[str], hits: list[int]) -> None:
        matched = set(hits)
        shown: set[int] = set()
        for index in hits:
            low, high = max(0, index - self.context), min(len(lines), index + self.context + 1)
            shown.update(range(low, high))
        for index in sorted(shown):
            kind = "match" if index in matched else "context"
            self.record(kind, relative, index + 1, lines[index] + "\n")

    def walk(self, descriptor: int, prefix: str) -> None:
        if self.use_ignore_files:
            for name in _IGNORE_FILES:
                try:
                    child = os.open(name, _FILE_FLAGS, dir_fd=descriptor)
                except OSError:
                    continue
                with os.fdopen(child, "rb") as handle:
                    self.rules.add(prefix, handle.read(256 * 1024).decode("utf-8", "replace"))
        with os.scandir(descriptor) as iterator:
            entries = sorted(
                (entry.name, entry.is_dir(follow_symlinks=False), entry.is_symlink())
                for entry in iterator
            )
        for name, is_directory, is_symlink in entries:
            relative = prefix + name
            if is_symlink or name == ".git" or self.globs.skip(relative, is_directory):
                continue
            if self.use_ignore_files and self.rules.ignored(relative, is_directory):
                continue
            flags = _DIRECTORY_FLAGS if is_directory else _FILE_FLAGS
            try:
                child = os.open(name, flags, dir_fd=descriptor)
            except OSError:
                continue
            try:
                if is_directory:
                    self.walk(child, relative + "/")
                else:
                    self.scan(child, relative)
            finally:
                os.close(child)


def main() -> int:
    """Run one request (see the module doc)."""
    request = json.loads(sys.argv[1])
    try:
        search = _Search(request)
    except re.error as error:
        sys.stderr.write(f"regex parse error:\n    {request.get('pattern', '')}\nerror: {error}\n")
        return 2
    target = request.get("target", "./")
    if target == "./":
        root = os.open(".", _DIRECTORY_FLAGS)
        try:
            search.walk(root, "")
        finally:
            os.close(root)
    else:
        # "fd:N:LABEL": the parent's verified descriptor of one file, and its display name.
        _, number, label = target.split(":", 2)
        search.scan(int(number), label)
    if search.mode == "grep" and search.output == "content":
        stats = {"searches": search.searched}
        sys.stdout.write(json.dumps({"type": "summary", "data": {"stats": stats}}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
