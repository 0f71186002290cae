"""Running a child process for a tool: no shell, minimal environment, hard bounds.

Every tool process (``run_command``, ``git_*``, the ``search_files`` worker) starts here:
``exec`` of an argv (never a shell), its own session/process group so the whole group can be
killed, an explicit environment built from nothing (no inherited ``*_API_KEY``,
``RELAVIUM_DB_KEY`` or anything else), stdout/stderr kept up to a byte cap while the rest is
drained and counted, and a timeout. On timeout or cancellation the process group is killed
with ``SIGKILL`` and reaped before control returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_CHUNK = 64 * 1024


def minimal_env(
    home: Path, temp_dir: Path, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The whole environment of a tool process: fixed values only, nothing inherited."""
    env = {
        "PATH": SAFE_PATH,
        "HOME": str(home),
        "TMPDIR": str(temp_dir),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
    }
    if extra:
        env.update(extra)
    return env


@dataclass(frozen=True)
class ProcessResult:
    """A finished (or killed) process; ``*_omitted`` count bytes past the cap."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    stdout_omitted: int
    stderr_omitted: int
    timed_out: bool

    def text(self, which: str) -> str:
        """Decoded stdout or stderr with a note of how much was cut."""
        data, omitted = (
            (self.stdout, self.stdout_omitted)
            if which == "stdout"
            else (self.stderr, self.stderr_omitted)
        )
        decoded = data.decode("utf-8", errors="replace")
        if omitted:
            decoded += f"\n[... {omitted:,} more bytes of {which} discarded ...]"
        return decoded


class _BoundedSink:
    """Keeps the first ``limit`` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.omitted = 0

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            room = self.limit - len(self.data)
            if room > 0:
                self.data += chunk[:room]
            self.omitted += max(0, len(chunk) - max(room, 0))


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _feed(process: asyncio.subprocess.Process, data: bytes) -> None:
    assert process.stdin is not None
    # A child that exits without reading its input is not our failure.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(data)
        await process.stdin.drain()
    process.stdin.close()


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    max_output_bytes: int,
    stdin: bytes | None = None,
    pass_fds: Sequence[int] = (),
) -> ProcessResult:
    """Run ``argv`` (``argv[0]`` already an absolute executable path) under the bounds."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
    assert process.stdout is not None and process.stderr is not None
    out, err = _BoundedSink(max_output_bytes), _BoundedSink(max_output_bytes)
    readers = [
        asyncio.ensure_future(out.drain(process.stdout)),
        asyncio.ensure_future(err.drain(process.stderr)),
    ]
    timed_out = False
    try:
        async with asyncio.timeout(timeout_s):
            if stdin is not None:
                await _feed(process, stdin)
            await process.wait()
            # Children that outlived the leader would hold the pipes open forever.
            _kill_group(process)
            await asyncio.gather(*readers)
    except TimeoutError:
        timed_out = True
    finally:
        if process.returncode is None or timed_out:
            _kill_group(process)
        for reader in readers:
            reader.cancel()
        # Reap even when we are being cancelled, so no zombie or stray group survives.
        await asyncio.shield(_reap(process, readers))
    return ProcessResult(
        exit_code=None if timed_out else process.returncode,
        stdout=bytes(out.data),
        stderr=bytes(err.data),
        stdout_omitted=out.omitted,
        stderr_omitted=err.omitted,
        timed_out=timed_out,
    )


async def _reap(
    process: asyncio.subprocess.Process, readers: Sequence[asyncio.Future[None]]
) -> None:
    await process.wait()
    await asyncio.gather(*readers, return_exceptions=True)
