"""Turn leases: which process runs a turn of a session, kept in the database itself.

Every editor window runs its own server process on one history database, so "is this
session busy" cannot live in one process's memory (``docs/design.md`` §7.1). A turn takes a
lease row — owner process id and host, a random owner token, a heartbeat — in the same
transaction as its user message; the owner renews the heartbeat while the turn runs and
deletes the row in the transaction that settles the turn.

Another process reads a lease as one of three things:

- **live** — the owner runs the turn: send, compact and delete are refused
  (:class:`~relavium_lsp.errors.SessionRunningElsewhere`), reading is fine, an abort is a
  request the owner's heartbeat picks up;
- **stale** — the owner is gone (its process is dead on this host, or its heartbeat is older
  than the timeout): the first process to notice takes it over, in one transaction that
  marks the cut turn interrupted (once: the marker ends the turn, so the next look finds
  nothing to do) and makes the session idle;
- **absent** — nobody runs a turn.

All functions here run inside a caller's transaction or open their own write transaction;
nothing here sleeps or looks at a clock except through the :class:`LeaseClock` passed in.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from relavium_lsp.contracts.content import TextPart, ToolCallPart
from relavium_lsp.contracts.session import InterruptionMarker, SessionMessage
from relavium_lsp.errors import SessionNotFound, SessionRunningElsewhere
from relavium_lsp.store.db.connection import Connection, relaxed_durability, write_transaction
from relavium_lsp.store.models import utc_timestamp
from relavium_lsp.store.rows import event_log, messages

INTERRUPTED_NOTE = "[The previous turn was interrupted before it finished (the server stopped).]"
# A turn runs (awaiting_peer: it waits for a delegated child, docs/design.md §2.5).
ACTIVE_STATUSES = ("streaming", "awaiting_approval", "awaiting_peer")


@dataclass(frozen=True)
class Lease:
    """One lease row."""

    session_id: str
    owner_pid: int
    owner_host: str
    owner_token: str
    heartbeat_at: float
    abort_requested: bool


@dataclass(frozen=True)
class LeaseClock:
    """What deciding "is this lease stale" needs: the time, the timeout, our own leases.

    ``own_tokens`` are the leases this process holds: a row with our pid but a token we do
    not know was left by an earlier process that had the same pid (a restarted container).
    """

    now: float
    timeout_s: float
    own_tokens: frozenset[str] = frozenset()
    host: str = ""
    pid: int = 0
    is_alive: Callable[[int], bool] | None = None

    def is_stale(self, lease: Lease) -> bool:
        """Whether the lease's owner is gone (dead process, or heartbeat too old)."""
        if lease.owner_token in self.own_tokens:
            return False
        if self.now - lease.heartbeat_at > self.timeout_s:
            return True
        if lease.owner_host != self.host:
            return False  # another machine's process ids mean nothing here: wait for timeout
        if lease.owner_pid == self.pid:
            return True  # our pid, not our token: a previous process that had this pid
        alive = self.is_alive or process_alive
        return not alive(lease.owner_pid)


def this_host() -> str:
    """The name leases record as their owner's host."""
    return socket.gethostname()


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists; it belongs to someone else
    except OSError:
        return False
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    """A killed process its parent has not reaped yet still answers ``kill(pid, 0)``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False  # no /proc (macOS): trust kill(); the heartbeat timeout still applies
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


def read_lease(connection: Connection, session_id: str) -> Lease | None:
    """The session's lease row, if any."""
    row = connection.execute(
        "SELECT session_id, owner_pid, owner_host, owner_token, heartbeat_at, abort_requested"
        " FROM session_leases WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    return None if row is None else _lease(row)


def all_leases(connection: Connection) -> list[Lease]:
    """Every lease row (a handful at most: one per running turn)."""
    rows = connection.execute(
        "SELECT session_id, owner_pid, owner_host, owner_token, heartbeat_at, abort_requested"
        " FROM session_leases"
    ).fetchall()
    return [_lease(row) for row in rows]


def _lease(row: tuple[object, ...]) -> Lease:
    return Lease(
        session_id=str(row[0]),
        owner_pid=int(row[1]),  # type: ignore[call-overload]
        owner_host=str(row[2]),
        owner_token=str(row[3]),
        heartbeat_at=float(row[4]),  # type: ignore[arg-type]
        abort_requested=bool(row[5]),
    )


def refuse_if_leased(
    connection: Connection, session_id: str, clock: LeaseClock, doing: str
) -> None:
    """Inside a write transaction: refuse ``doing`` while another process runs a turn.

    A stale lease is taken over first (the cut turn is marked), so the caller may go on.
    """
    lease = read_lease(connection, session_id)
    if lease is None or lease.owner_token in clock.own_tokens:
        return
    if clock.is_stale(lease):
        take_over(connection, lease)
        return
    raise SessionRunningElsewhere(
        f"session {session_id} is running a turn in another window (process "
        f"{lease.owner_pid}); {doing} it when that turn has finished, or abort it"
    )


def take_lease(connection: Connection, session_id: str, token: str, clock: LeaseClock) -> None:
    """Inside a write transaction: hold the session's lease under ``token`` (or renew it)."""
    refuse_if_leased(connection, session_id, clock, "send to")
    connection.execute(
        "INSERT INTO session_leases (session_id, owner_pid, owner_host, owner_token,"
        " heartbeat_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET"
        " owner_pid = excluded.owner_pid, owner_host = excluded.owner_host,"
        " owner_token = excluded.owner_token, heartbeat_at = excluded.heartbeat_at,"
        " abort_requested = 0",
        (session_id, clock.pid, clock.host, token, clock.now),
    )
    # The first block of event numbers the owner may hand out before writing them (§3.1).
    used = event_log.numbers_used(connection, session_id)
    event_log.reserve(connection, session_id, token, used + event_log.RESERVE_BLOCK)


def renew_lease(connection: Connection, session_id: str, token: str, now: float) -> bool | None:
    """The owner's heartbeat: ``None`` if the lease was lost, else whether an abort was asked.

    Without an fsync (like the event log): a heartbeat an OS crash loses only makes the lease
    look older, and a token stream must not queue behind a disk flush once a second.
    """
    with relaxed_durability(connection), write_transaction(connection):
        row = connection.execute(
            "UPDATE session_leases SET heartbeat_at = ? WHERE session_id = ? AND owner_token = ?"
            " RETURNING abort_requested",
            (now, session_id, token),
        ).fetchone()
    return None if row is None else bool(row[0])


def release_lease(connection: Connection, session_id: str, token: str, handed_out: int = 0) -> bool:
    """Inside a write transaction: drop our lease; ``False`` if it was no longer ours.

    ``handed_out``: the highest event number the owner gave out. It wrote all of them before
    releasing, normally, so this is the log's newest and leaves no floor; after a failed
    write the log numbers past it all the same (never a number twice, §3.1).
    """
    cursor = connection.execute(
        "DELETE FROM session_leases WHERE session_id = ? AND owner_token = ?", (session_id, token)
    )
    if cursor.rowcount > 0 and handed_out:
        event_log.raise_floor(connection, session_id, handed_out)
    return cursor.rowcount > 0


def request_abort(connection: Connection, session_id: str) -> Lease | None:
    """Ask the lease's owner to abort its turn; the lease (``None`` when there is none)."""
    with write_transaction(connection):
        messages.require_session(connection, session_id)
        connection.execute(
            "UPDATE session_leases SET abort_requested = 1 WHERE session_id = ?", (session_id,)
        )
        return read_lease(connection, session_id)


def recover_session(connection: Connection, session_id: str, clock: LeaseClock) -> Lease | None:
    """Bring a session whose turn nobody runs any more to rest; the live lease if one holds it.

    Nothing is written while another process holds a live lease. Otherwise (a stale lease, or
    none with the session still marked as running, or a history cut mid-turn) the cut turn is
    marked interrupted and the session made idle, all in one transaction.
    """
    lease = read_lease(connection, session_id)
    if lease is not None and (lease.owner_token in clock.own_tokens or not clock.is_stale(lease)):
        return lease
    if lease is None and not _needs_recovery(connection, session_id):
        return None  # the common case: read only, no write lock
    with write_transaction(connection):
        lease = read_lease(connection, session_id)
        if lease is not None:
            if lease.owner_token in clock.own_tokens or not clock.is_stale(lease):
                return lease  # renewed or retaken meanwhile
            take_over(connection, lease)
        else:
            _mark_interrupted(connection, session_id)
    return None


def recover_abandoned(connection: Connection, clock: LeaseClock) -> list[str]:
    """Take over every stale lease and settle every running-without-lease session.

    What a session list does first, so that a crashed window's sessions show idle (with their
    interruption marker) without anyone resuming them. Returns the sessions it settled.
    """
    candidates = {lease.session_id for lease in all_leases(connection) if clock.is_stale(lease)}
    rows = connection.execute(
        "SELECT id FROM agent_sessions"
        " WHERE status IN ('streaming', 'awaiting_approval', 'awaiting_peer')"
        " AND deleted_at IS NULL AND id NOT IN (SELECT session_id FROM session_leases)"
    ).fetchall()
    candidates.update(str(row[0]) for row in rows)
    settled = []
    for session_id in sorted(candidates):
        try:
            if recover_session(connection, session_id, clock) is None:
                settled.append(session_id)
        except SessionNotFound:
            continue
    return settled


def _needs_recovery(connection: Connection, session_id: str) -> bool:
    row = connection.execute(
        "SELECT status FROM agent_sessions WHERE id = ? AND deleted_at IS NULL", (session_id,)
    ).fetchone()
    if row is None:
        return False
    if row[0] in ACTIVE_STATUSES:
        return True
    last = messages.last_message(connection, session_id)
    return last is not None and not ends_a_turn(last)


def take_over(connection: Connection, lease: Lease) -> None:
    """Inside a write transaction: end a stale lease — mark the cut turn, fold the inbox.

    The dead owner numbered its events in memory (§3.1); what other processes left in the
    session's inbox for it is numbered now, past every number the owner reserved (it may
    have delivered them without writing them: they are skipped, never given again).
    """
    # It may have delivered numbers it never wrote: they are never given again (a hole).
    event_log.keep_floor(connection, lease.session_id, lease.owner_token)
    connection.execute(
        "DELETE FROM session_leases WHERE session_id = ? AND owner_token = ?",
        (lease.session_id, lease.owner_token),
    )
    _mark_interrupted(connection, lease.session_id)
    event_log.allocate(connection, lease.session_id, [], utc_timestamp())


def _mark_interrupted(connection: Connection, session_id: str) -> None:
    """Mark a cut turn (once: the marker ends it) and make a running session idle."""
    last = messages.last_message(connection, session_id)
    if last is not None and not ends_a_turn(last):
        marker = InterruptionMarker(interrupted_after_sequence=last.sequence_number)
        messages.append_message(
            connection, session_id, "system", [TextPart(text=INTERRUPTED_NOTE)], interruption=marker
        )
    connection.execute(
        "UPDATE agent_sessions SET status = 'idle'"
        " WHERE id = ? AND status IN ('streaming', 'awaiting_approval', 'awaiting_peer')",
        (session_id,),
    )


def ends_a_turn(message: SessionMessage) -> bool:
    """Whether history may rest on this message (a final answer or a system marker)."""
    if message.role == "system":
        return True
    if message.role != "assistant":
        return False
    return not any(isinstance(part, ToolCallPart) for part in message.content)
