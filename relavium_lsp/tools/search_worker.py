"""The ``search_files`` worker: a standard-library-only child process.

It is a separate process because Python's ``re`` cannot be interrupted: a pathological
pattern (``(a+)+$``) could otherwise pin a server thread forever. The parent kills this
process group when its time is up.

Protocol: the parent opens the jailed start path itself and passes the descriptor number as
``argv[1]``; the request is one JSON object on stdin; the reply is one JSON object on stdout.
The walk starts from that descriptor and opens every child relative to its parent with
``O_NOFOLLOW``, so it can never leave the checked tree through a symlink. ``.git`` and
binary files are skipped; files, matches, file size and line length are all bounded.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import stat
import sys
from typing import Any

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
SKIPPED_DIRECTORIES = frozenset({".git"})


class _Search:
    def __init__(self, request: dict[str, Any]) -> None:
        pattern = request["pattern"]
        flags = 0 if request.get("caseSensitive", True) else re.IGNORECASE
        source = pattern if request["isRegex"] else re.escape(pattern)
        self.regex = re.compile(source, flags)
        self.glob: str | None = request.get("glob")
        self.max_matches: int = request["maxMatches"]
        self.max_files: int = request["maxFiles"]
        self.max_file_bytes: int = request["maxFileBytes"]
        self.max_line_chars: int = request["maxLineChars"]
        self.shown_chars: int = request["shownChars"]
        self.matches: list[list[Any]] = []
        self.files_scanned = 0
        self.skipped_binary = 0
        self.skipped_large = 0
        self.stopped = False

    def _wanted(self, relative: str) -> bool:
        if not self.glob:
            return True
        subject = relative if "/" in self.glob else relative.rsplit("/", 1)[-1]
        return fnmatch.fnmatchcase(subject, self.glob)

    def scan_file(self, descriptor: int, relative: str) -> None:
        if self.files_scanned >= self.max_files or len(self.matches) >= self.max_matches:
            self.stopped = True
            return
        self.files_scanned += 1
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return
        if status.st_size > self.max_file_bytes:
            self.skipped_large += 1
            return
        with os.fdopen(os.dup(descriptor), "rb") as handle:
            data = handle.read(self.max_file_bytes + 1)
        if b"\0" in data[:8192]:
            self.skipped_binary += 1
            return
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            probe = line[: self.max_line_chars]
            if self.regex.search(probe):
                shown = probe[: self.shown_chars]
                self.matches.append([relative, number, shown, len(line) > len(shown)])
                if len(self.matches) >= self.max_matches:
                    self.stopped = True
                    return

    def walk(self, descriptor: int, prefix: str) -> None:
        with os.scandir(descriptor) as iterator:
            names = sorted(
                (entry.name, entry.is_dir(follow_symlinks=False), entry.is_symlink())
                for entry in iterator
            )
        for name, is_directory, is_symlink in names:
            if self.stopped:
                return
            if is_symlink:
                continue
            relative = prefix + name
            if is_directory:
                if name in SKIPPED_DIRECTORIES:
                    continue
                try:
                    child = os.open(name, _DIRECTORY_FLAGS, dir_fd=descriptor)
                except OSError:
                    continue
                try:
                    self.walk(child, relative + "/")
                finally:
                    os.close(child)
            elif self._wanted(relative):
                try:
                    child = os.open(name, _FILE_FLAGS, dir_fd=descriptor)
                except OSError:
                    continue
                try:
                    self.scan_file(child, relative)
                finally:
                    os.close(child)


def main() -> int:
    """Run one search request (see the module doc)."""
    descriptor = int(sys.argv[1])
    request = json.loads(sys.stdin.read())
    try:
        search = _Search(request)
    except re.error as error:
        json.dump({"error": f"invalid regular expression: {error}"}, sys.stdout)
        return 0
    if stat.S_ISDIR(os.fstat(descriptor).st_mode):
        search.walk(descriptor, "")
    else:
        search.scan_file(descriptor, request["label"])
    json.dump(
        {
            "matches": search.matches,
            "filesScanned": search.files_scanned,
            "skippedBinary": search.skipped_binary,
            "skippedLarge": search.skipped_large,
            "stopped": search.stopped,
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
