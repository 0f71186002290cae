"""A command's own subreaper: every descendant dies with it (issue 35; Linux).

Killing a command's process group misses a descendant that called ``setsid()`` (a session
and group of its own) and whose parent then exited — it was reparented to init and outlived
the abort. So on Linux a terminal command does not run directly: this small program runs it.
It marks itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``), so every orphan in
its subtree is reparented to it rather than to init, starts the command as its child, and
when the command exits — or the server asks it to stop with ``SIGTERM``, or the server dies
(``PR_SET_PDEATHSIG``) — kills every process still below it, reaps them, and exits the way
the command did (its exit code, or the same signal). Nothing else changes: the command is
the same argv, on the same terminal, with the same environment.

It runs as ``python -I -S reaper.py ARGV...`` — no site packages, no import of
``relavium_lsp`` (a few milliseconds) — so this file imports only the standard library.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# Rounds of "find what is left below us, kill it": each round kills what the last one saw,
# and what they forked meanwhile is reparented to us and found in the next one.
MAX_ROUNDS = 200


def descendants(root: int) -> list[int]:
    """Live (not zombie) processes below ``root``, from ``/proc``."""
    children: dict[int, list[int]] = {}
    zombies: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # it exited meanwhile
        pid, state, parent = int(entry), fields[0], int(fields[1])
        children.setdefault(parent, []).append(pid)
        if state == b"Z":
            zombies.add(pid)
    found: list[int] = []
    pending = list(children.get(root, ()))
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, ()))
    return [pid for pid in found if pid not in zombies]


def reap_zombies() -> None:
    """Collect every exited child (orphans reparented to us included)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_everything_below() -> None:
    """SIGKILL every descendant, round after round, until none is left."""
    me = os.getpid()
    for _ in range(MAX_ROUNDS):
        victims = descendants(me)
        if not victims:
            break
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        reap_zombies()
    reap_zombies()


def exit_like(status: int) -> None:
    """Leave with the command's exit code, or die of the signal that ended it."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def main(argv: list[str]) -> None:
    """Run ``argv`` as our child; clean up everything below us when it or we end."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)  # the server died: stop too

    def stop(number: int, frame: object) -> None:
        kill_everything_below()
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)

    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(number, stop)
    if os.getppid() == 1:  # the server is gone already (before the death signal was set)
        os._exit(1)
    child = os.fork()
    if child == 0:
        for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(number, signal.SIG_DFL)
        try:
            os.execv(argv[0], argv)  # noqa: S606 -- an argv, never a shell, by design
        except OSError as error:
            os.write(2, f"{argv[0]}: {error.strerror}\n".encode())
            os._exit(127)
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            break
    kill_everything_below()  # background processes it left: a command's children end with it
    exit_like(status)


if __name__ == "__main__":
    main(sys.argv[1:])
