"""A child process on a pseudo-terminal, its output streamed as it comes and kept within a cap.

``run_command`` and the background terminals run here. Like every tool process
(:mod:`relavium_lsp.tools.runner`) it is an argv (never a shell), with an environment built
from nothing, in its own session and process group. Its stdout and stderr are the slave side
of a PTY — programs see a terminal, so they line-buffer and show progress as they would for
a person — and stdin is ``/dev/null`` (a command waiting for input gets end-of-file instead of
hanging until the timeout). Output post-processing is off, so lines end as the program wrote them.

Output goes two ways: to ``on_output`` as decoded text (the caller throttles and streams it)
and into an :class:`OutputKeeper`, which keeps the head and the tail of what was written up to
a byte cap and counts what it dropped between them. On timeout, on :meth:`PtyProcess.kill`
and on cancellation every descendant is killed and reaped: on Linux the command runs under
its own subreaper (:mod:`relavium_lsp.tools.reaper`), which is asked to stop with ``SIGTERM``
and kills everything below it — a grandchild that left the process group with ``setsid()``
too (issue 35) — then the whole process group gets ``SIGKILL`` as before.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import os
import pty
import signal
import struct
import sys
import termios
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

_READ = 64 * 1024
COLUMNS, ROWS = 120, 40
# After the group is killed, how long to wait for the terminal to report that all are gone.
_DRAIN_AFTER_EXIT_S = 2.0
# How long the subreaper may take to kill what is below it before the group gets SIGKILL.
_REAPER_GRACE_S = 5.0
_REAPER = Path(__file__).with_name("reaper.py")


def with_subreaper(argv: Sequence[str]) -> list[str]:
    """``argv`` run under :mod:`relavium_lsp.tools.reaper` where the system has subreapers."""
    if not sys.platform.startswith("linux"):
        return list(argv)
    return [sys.executable, "-I", "-S", str(_REAPER), *argv]


class OutputKeeper:
    """The first ``head`` and last ``tail`` bytes of a stream, and how many were dropped."""

    def __init__(self, limit: int) -> None:
        self.head_limit = max(0, limit // 4)
        self.tail_limit = max(0, limit - self.head_limit)
        self.head = bytearray()
        self.tail = bytearray()
        self.omitted = 0
        self.total = 0

    def add(self, data: bytes) -> None:
        """Keep what fits; everything else is counted in ``omitted``."""
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail += data
        overflow = len(self.tail) - self.tail_limit
        if overflow > 0:
            self.omitted += overflow
            del self.tail[:overflow]

    def text(self) -> str:
        """The kept output, with a marker where bytes were dropped."""
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if not self.omitted:
            return head + tail
        return f"{head}\n[... {self.omitted:,} bytes of output omitted ...]\n{tail}"


@dataclass(frozen=True)
class PtyResult:
    """A finished (or killed) terminal command."""

    exit_code: int | None
    timed_out: bool
    output: str
    omitted: int
    total_bytes: int


def _open_terminal() -> tuple[int, int]:
    master, slave = pty.openpty()
    attributes = termios.tcgetattr(slave)
    attributes[1] &= ~termios.OPOST  # no "\n" -> "\r\n": output reads as the program wrote it
    termios.tcsetattr(slave, termios.TCSANOW, attributes)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    os.set_blocking(master, False)
    return master, slave


class PtyProcess:
    """One process on its own PTY; :meth:`wait` returns when it and its output are done."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        master: int,
        keeper: OutputKeeper,
        on_output: Callable[[str], None] | None,
    ) -> None:
        self.process = process
        self._master = master
        self.keeper = keeper
        self._on_output = on_output
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._eof = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().add_reader(master, self._readable)

    @classmethod
    async def start(
        cls,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        keep_bytes: int,
        on_output: Callable[[str], None] | None = None,
    ) -> PtyProcess:
        """Start ``argv`` (``argv[0]`` an absolute executable) on a fresh terminal."""
        master, slave = _open_terminal()
        try:
            process = await asyncio.create_subprocess_exec(
                *with_subreaper(argv),
                cwd=cwd,
                env=dict(env),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=slave,
                stderr=slave,
                start_new_session=True,
            )
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        return cls(process, master, OutputKeeper(keep_bytes), on_output)

    @property
    def pid(self) -> int:
        """The process (and process group) id: the command's subreaper where there is one."""
        return self.process.pid

    @property
    def running(self) -> bool:
        """Whether the leader has not exited yet."""
        return self.process.returncode is None

    def _readable(self) -> None:
        try:
            data = os.read(self._master, _READ)
        except BlockingIOError:
            return
        except OSError:
            data = b""  # EIO: every writer closed the terminal
        if not data:
            self._close_reader()
            return
        self.keeper.add(data)
        if self._on_output is not None:
            text = self._decoder.decode(data)
            if text:
                self._on_output(text)

    def _close_reader(self) -> None:
        if self._eof.done():
            return
        asyncio.get_running_loop().remove_reader(self._master)
        os.close(self._master)
        self._eof.set_result(None)

    def kill(self) -> None:
        """Ask the subreaper to kill every descendant, or SIGKILL the group where there is none.

        :meth:`stop` follows up with ``SIGKILL`` to the group either way.
        """
        number = signal.SIGTERM if sys.platform.startswith("linux") else signal.SIGKILL
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if number == signal.SIGTERM:
                os.kill(self.process.pid, number)
            else:
                os.killpg(self.process.pid, number)

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    async def wait(self) -> int:
        """Wait for the leader, then for its output; stragglers in the group are killed."""
        code = await self.process.wait()
        # Children that outlived the leader would hold the terminal open forever.
        await self.stop()
        return code

    async def stop(self) -> None:
        """Kill the group and reap it (safe to call twice, and while being cancelled).

        Returns once the leader is reaped and every process holding the terminal is gone
        (the terminal reports end-of-file), or after a short grace period for one that left
        the group on its own.
        """
        if self.running:
            self.kill()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_REAPER_GRACE_S):
                    await asyncio.shield(self.process.wait())
        self._kill_group()
        await asyncio.shield(self.process.wait())
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_DRAIN_AFTER_EXIT_S):
                await asyncio.shield(self._eof)
        self._close_reader()


async def run_in_pty(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    keep_bytes: int,
    on_output: Callable[[str], None] | None = None,
) -> PtyResult:
    """Run ``argv`` on a PTY to completion (or the timeout); cancellation kills the group."""
    process = await PtyProcess.start(
        argv, cwd=cwd, env=env, keep_bytes=keep_bytes, on_output=on_output
    )
    timed_out = False
    try:
        async with asyncio.timeout(timeout_s):
            await process.wait()
    except TimeoutError:
        timed_out = True
    finally:
        await process.stop()
    keeper = process.keeper
    return PtyResult(
        exit_code=None if timed_out else process.process.returncode,
        timed_out=timed_out,
        output=keeper.text(),
        omitted=keeper.omitted,
        total_bytes=keeper.total,
    )
