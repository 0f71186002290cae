"""The engine's front door, part 4: events — live, durable backlog, session-list changes.

Mixed into :class:`~relavium_lsp.engine.api.Engine`.
"""

from __future__ import annotations

from relavium_lsp.contracts.events import StampedEvent
from relavium_lsp.engine.api_base import EngineBase
from relavium_lsp.engine.events.bus import Listener, Unsubscribe
from relavium_lsp.engine.events.watch import ListListener
from relavium_lsp.engine.memory.workspace import MemoryListener


class Events(EngineBase):
    """Events (part of :class:`~relavium_lsp.engine.api.Engine`)."""

    # -- events -----------------------------------------------------------------------------

    async def subscribe(
        self,
        listener: Listener,
        *,
        session_id: str | None = None,
        after_sequence: int | None = None,
    ) -> Unsubscribe:
        """Deliver events to ``listener`` from now on, in order; returns an unsubscribe.

        Without ``session_id``: every session's live events. With it: that session's only —
        and with ``after_sequence`` as well, first the durable backlog after that sequence
        number, then live events, each exactly once and without a gap.
        """
        bus = self._services.bus
        # Served sessions' events from other windows arrive through the shared log (§3.1).
        self._watcher.start()
        if session_id is None:
            if after_sequence is not None:
                raise ValueError("after_sequence needs a session_id")
            return bus.subscribe(listener)
        if after_sequence is None:
            after_sequence = await bus.last_sequence(session_id)
        return await bus.follow(session_id, after_sequence, listener)

    async def watch_memory(self, listener: MemoryListener) -> Unsubscribe:
        """Hear of every new workspace memory revision, from any process (§2.6)."""
        unsubscribe = await self.memory.watch(listener)
        self._watcher.start()
        return unsubscribe

    def watch_sessions(self, listener: ListListener) -> Unsubscribe:
        """Call ``listener`` with session-list changes made by any process on this history.

        Creations, renames, deletions and status changes, in commit order, batched per poll
        (``docs/design.md`` §3.1); returns an unsubscribe.
        """
        return self._watcher.on_list_change(listener)

    async def events_after(
        self, session_id: str, after_sequence: int, limit: int = 1000
    ) -> list[StampedEvent]:
        """The durable event backlog after a sequence number."""
        await self._live.require_record(session_id)
        return await self._services.bus.events_after(session_id, after_sequence, limit)

    async def flush_events(self, session_id: str) -> None:
        """Wait until every event emitted so far for the session reached the subscribers."""
        await self._services.bus.drain(session_id)
