"""The session repository, turns part: beginning and ending turns, and their leases.

A turn's start (status, count, user message, lease) and its end (lease released, status
settled) are one commit each (docs/design.md §7.1). Mixed into ``SessionStore``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from relavium_lsp.contracts.content import DurableContentPart
from relavium_lsp.contracts.session import SessionMessage, SessionStatus
from relavium_lsp.store.db.connection import relaxed_durability, write_transaction
from relavium_lsp.store.repo_messages import MessageRows
from relavium_lsp.store.repo_sessions import SessionRows
from relavium_lsp.store.rows import leases, messages


class TurnRows(SessionRows, MessageRows):
    """Turns and session leases (part of ``SessionStore``)."""

    def begin_turn(
        self,
        session_id: str,
        content: Sequence[DurableContentPart],
        *,
        wait_for_disk: bool = True,
        lease: tuple[str, leases.LeaseClock] | None = None,
        author: str | None = None,
    ) -> tuple[SessionMessage, int]:
        """Mark the session streaming, count the turn and append its user message — one commit.

        Returns the user message and the new turn count. With ``wait_for_disk=False`` the
        commit does not wait for its fsync (it is in the write-ahead log, so it survives the
        process being killed); the caller must then call :meth:`sync_log` (the engine does so
        while the model request is already on its way, see ``engine.session``). With
        ``lease`` (token, clock) the turn's lease is taken in the same commit, or the turn is
        refused with :class:`SessionRunningElsewhere`.
        """
        connection = self._connection
        durability = contextlib.nullcontext() if wait_for_disk else relaxed_durability(connection)
        with durability, write_transaction(connection):
            if lease is not None:
                messages.require_session(connection, session_id)
                leases.take_lease(connection, session_id, lease[0], lease[1])
                self._fences[session_id] = lease[0]
            self.set_status(session_id, "streaming")
            turn_count = self.increment_turn_count(session_id)
            message = self.append_message(session_id, "user", content, agent_slug=author)
        return message, turn_count

    def end_turn(
        self,
        session_id: str,
        token: str | None,
        status: SessionStatus = "idle",
        handed_out: int = 0,
    ) -> bool:
        """Release the turn's lease and set the settled status (``idle``/``failed``) — one commit.

        ``False`` (and nothing written) when the lease was no longer ours: another process
        took it over, marked the turn and owns what happens to the session now.
        ``handed_out``: the highest event number the bus gave out under the lease.
        """
        self._fences.pop(session_id, None)
        with write_transaction(self._connection):
            if token is not None and not leases.release_lease(
                self._connection, session_id, token, handed_out
            ):
                return False
            self.set_status(session_id, status)
        return True

    def acquire_lease(self, session_id: str, token: str, clock: leases.LeaseClock) -> None:
        """Hold the session's lease (work other than a turn, e.g. compaction), or refuse."""
        with write_transaction(self._connection):
            messages.require_session(self._connection, session_id)
            leases.take_lease(self._connection, session_id, token, clock)
            self._fences[session_id] = token

    def release_lease(self, session_id: str, token: str, handed_out: int = 0) -> bool:
        """Drop a lease taken with :meth:`acquire_lease` (``handed_out``: see ``end_turn``)."""
        if self._fences.get(session_id) == token:
            del self._fences[session_id]
        with write_transaction(self._connection):
            return leases.release_lease(self._connection, session_id, token, handed_out)

    def renew_lease(self, session_id: str, token: str, now: float) -> bool | None:
        """Heartbeat: ``None`` if the lease is lost, else whether an abort was requested."""
        return leases.renew_lease(self._connection, session_id, token, now)

    def read_lease(self, session_id: str) -> leases.Lease | None:
        """The session's lease row, if a turn holds one."""
        return leases.read_lease(self._connection, session_id)

    def refuse_if_leased(self, session_id: str, clock: leases.LeaseClock, doing: str) -> None:
        """Raise :class:`SessionRunningElsewhere` while another process runs a turn."""
        lease = leases.read_lease(self._connection, session_id)
        if lease is None or lease.owner_token in clock.own_tokens:
            return
        with write_transaction(self._connection):
            leases.refuse_if_leased(self._connection, session_id, clock, doing)

    def request_abort(self, session_id: str) -> leases.Lease | None:
        """Ask the process holding the session's lease to abort its turn."""
        return leases.request_abort(self._connection, session_id)

    def recover_session(self, session_id: str, clock: leases.LeaseClock) -> leases.Lease | None:
        """Settle a turn nobody runs any more; the live lease if another process runs one."""
        return leases.recover_session(self._connection, session_id, clock)

    def recover_abandoned(self, clock: leases.LeaseClock) -> list[str]:
        """Settle every session whose turn's owner is gone; returns their ids."""
        return leases.recover_abandoned(self._connection, clock)
