"""A live session's turn lease (docs/design.md §7.1): taking it, its heartbeat, releasing it.

While a turn (or a compaction) changes a session's history, this process holds the session's
lease in the database, renewed by a heartbeat; another window's request to abort, or a lease
taken over, stops the turn. Mixed into ``AgentSession``.
"""

from __future__ import annotations

import asyncio

from relavium_lsp.contracts.session import SessionStatus
from relavium_lsp.engine.sessions.state import SessionState
from relavium_lsp.engine.waiting import finish_before_cancelling
from relavium_lsp.store.rows.leases import LeaseClock


class SessionLease(SessionState):
    """The lease of a session's running turn (part of ``AgentSession``)."""

    async def _take_lease(self) -> tuple[str, LeaseClock] | None:
        """The turn's lease as ``begin_turn`` takes it: a fresh token (kept for the turn)."""
        leases = self.scope.leases
        if leases is None:
            return None
        if self._lease_token is None:
            self._lease_token = leases.new_token()
        return self._lease_token, leases.clock()

    def _forget_unused_lease(self) -> None:
        """The turn stopped before its commit took the lease: drop the token it would use."""
        token, self._lease_token = self._lease_token, None
        leases = self.scope.leases
        if token is not None and leases is not None:
            leases.drop_token(token)

    def _start_heartbeat(self) -> None:
        leases = self.scope.leases
        if leases is not None and self._lease_token is not None and self._heartbeat is None:
            self._heartbeat = leases.heartbeat(self.id, self._lease_token, self._stop_from_afar)

    def _stop_from_afar(self, reason: str) -> None:
        """The heartbeat found an abort request, or found the lease taken over: stop."""
        if reason == "lost":
            self._lease_lost = True
        if self._in_turn_body and self._turn is not None and not self._turn.done():
            self._turn.cancel()

    async def _end_lease(self, status: SessionStatus = "idle") -> bool:
        """Stop the heartbeat; release the lease and set the settled status (one commit)."""
        heartbeat, self._heartbeat = self._heartbeat, None
        if heartbeat is not None:
            heartbeat.cancel()
            await asyncio.wait({heartbeat})
        token, self._lease_token = self._lease_token, None
        if token is None:
            await self.set_status(status)
            return True
        # Every event numbered here is written before the lease goes (docs/design.md §3.1).
        await self.scope.disown_events()
        leases = self.scope.leases
        if leases is not None:
            leases.drop_token(token)
        if self._lease_lost:
            return False
        handed_out = self.scope.events_handed_out()
        kept = await finish_before_cancelling(
            self.scope.store.run(lambda s: s.end_turn(self.id, token, status, handed_out))
        )
        self.scope.events_released()
        if kept:
            self.record = self.record.model_copy(update={"status": status})
        else:
            self._lease_lost = True
        return kept

    async def _hold_lease_early(self) -> None:
        """Compaction before the user message changes history too: take the lease first."""
        lease = await self._take_lease()
        if lease is not None:
            token, clock = lease
            await self.scope.hold_lease(token, clock)
            self._start_heartbeat()
