"""The session event bus: one place that stamps, persists and delivers events.

Every session has one increasing sequence of events, in the durable ``session_events`` log
and on every listener, even when several server processes share one database; a number is
never given twice (a killed owner's unwritten numbers become a hole); a client that missed
something fetches it back with :meth:`EventBus.events_after` (``docs/design.md`` §3.1). Who
gives the numbers depends on the session's turn lease (§7.1):

- **Owned** — this process holds the lease (a turn, a compaction, an introspection pass) and
  :meth:`EventBus.claim` was called with its token: :meth:`EventBus.emit` stamps the event in
  memory with the next number, delivers it at once, and queues it for write-behind with that
  number (``append_numbered_events``) — only numbers the lease row has reserved durably;
  past them the database numbers until a new block is reserved. No other process can
  number events of the session meanwhile: their appends wait in the session's inbox, which
  this bus folds into its own numbering when the watcher says another process committed
  (:meth:`take_inbox`). On :meth:`disown` everything numbered is written before the caller
  releases the lease.
- **Unowned** — the database numbers: a per-session pump writes whatever has queued up in one
  transaction (folding the inbox first), then delivers it. While a write is in flight new
  events accumulate, so batches grow instead of the stream slowing down; consecutive
  ``agent:token`` (and ``agent:reasoning``) deltas of one model in a batch are merged —
  coalesced, never reordered or dropped.

A *watched* session (one this process serves) also gets the events other processes write:
:meth:`EventBus.catch_up` reads the durable log past the newest sequence delivered, and a
local batch whose numbers jump past that first delivers the gap from the log — so every
listener sees one gapless sequence, in order, whichever process wrote it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from relavium_lsp.contracts.events import EventPayload, StampedEvent
from relavium_lsp.engine.bus_base import Listener, call_listener
from relavium_lsp.engine.bus_channel import Channel, LogState, coalesce
from relavium_lsp.engine.bus_numbering import OwnedNumbering
from relavium_lsp.errors import DatabaseCorrupted, StoreError

__all__ = ["BACKLOG_PAGE", "EventBus", "Listener", "LogState", "Unsubscribe", "coalesce"]

Unsubscribe = Callable[[], None]
BACKLOG_PAGE = 1000
_log = logging.getLogger(__name__)


class EventBus(OwnedNumbering):
    """Stamps, persists and delivers session events in order."""

    def watched(self) -> list[str]:
        """The sessions whose events from other processes this bus delivers."""
        return list(self._baseline)

    async def watch(self, session_id: str) -> None:
        """Deliver this session's events written by other processes from now on."""
        if session_id in self._baseline:
            return
        try:
            last = await self._store.run(lambda s: s.last_event_sequence(session_id))
        except DatabaseCorrupted:
            # A damaged event log must not keep the session from opening (issue 16): other
            # windows' events go unseen here; the store has logged which file to recover.
            return
        # Events up to ``last`` that a local pump has persisted but not delivered yet are
        # still delivered by it: the baseline only bounds what catch_up reads back.
        self._baseline.setdefault(session_id, last)

    def unwatch(self, session_id: str) -> None:
        """Stop following a session's events from other processes."""
        self._baseline.pop(session_id, None)

    async def catch_up(self, session_id: str) -> int:
        """Deliver a watched session's events other processes committed; returns how many."""
        if session_id not in self._baseline:
            return 0
        count = 0
        async with self._lock(session_id):
            while True:
                after = self.delivered_through(session_id)
                page = await self._store.run(
                    lambda s, after=after: s.events_after(session_id, after, BACKLOG_PAGE)  # type: ignore[misc]
                )
                for event in page:
                    if event.sequence_number > self._delivered.get(session_id, 0):
                        self._deliver(event)
                count += len(page)
                if len(page) < BACKLOG_PAGE:
                    return count

    def subscribe(self, listener: Listener) -> Unsubscribe:
        """Call ``listener`` with every stamped event, in order; returns an unsubscribe."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def follow(self, session_id: str, after_sequence: int, listener: Listener) -> Unsubscribe:
        """Deliver one session's events after ``after_sequence``: the backlog, then live.

        The listener starts receiving live events before the durable backlog is read, holds
        them back while the backlog is delivered, and then skips whatever the backlog already
        covered — so it sees every event exactly once, in sequence order, with no gap.
        """
        held: list[StampedEvent] = []
        caught_up = False
        delivered = after_sequence

        def deliver(event: StampedEvent) -> None:
            nonlocal delivered
            if event.sequence_number > delivered:
                delivered = event.sequence_number
                call_listener(listener, event)

        def on_event(event: StampedEvent) -> None:
            if event.session_id != session_id:
                return
            if caught_up:
                deliver(event)
            else:
                held.append(event)

        unsubscribe = self.subscribe(on_event)
        try:
            while True:
                page = await self.events_after(session_id, delivered, BACKLOG_PAGE)
                for event in page:
                    deliver(event)
                if len(page) < BACKLOG_PAGE:
                    break
        except BaseException:
            unsubscribe()
            raise
        caught_up = True
        for event in held:
            deliver(event)
        held.clear()
        return unsubscribe

    def emit(self, session_id: str, payload: EventPayload) -> None:
        """Queue an event for persistence and delivery (never blocks).

        In an owned session the event is numbered and delivered as soon as the current turn
        of the event loop ends (what a fast stream emitted meanwhile is coalesced first).
        """
        channel = self._channel(session_id)
        if channel.next_sequence is not None:
            self._stage(channel, session_id, payload, None)
        else:
            channel.pending.append(payload)
        self._kick(session_id, channel)

    def release(self, session_id: str) -> None:
        """Forget an idle session's queue and lock (its live object was dropped, issue 16).

        Only what is idle goes: a queue with events in flight, a claimed numbering or a held
        lock stays. Emitting again later simply starts a new queue. What is being watched
        stays watched.
        """
        channel = self._channels.get(session_id)
        if (
            channel is not None
            and not channel.pending
            and not channel.numbered
            and not channel.staged
            and channel.pump is None
            and channel.owner is None
        ):
            del self._channels[session_id]
        lock = self._delivery_locks.get(session_id)
        if lock is not None and not lock.locked():
            del self._delivery_locks[session_id]

    async def drain_all(self) -> None:
        """Wait until every session's queue is empty (used on shutdown)."""
        for session_id in list(self._channels):
            await self.drain(session_id)

    async def events_after(
        self, session_id: str, after_sequence: int, limit: int = 1000
    ) -> list[StampedEvent]:
        """Exactly the events a subscriber that saw ``after_sequence`` has missed."""
        await self.drain(session_id)
        return await self._store.run(lambda s: s.events_after(session_id, after_sequence, limit))

    async def last_sequence(self, session_id: str) -> int:
        """The sequence number of the newest persisted event (0 when none)."""
        await self.drain(session_id)
        return await self._store.run(lambda s: s.last_event_sequence(session_id))

    async def _pump(self, session_id: str, channel: Channel) -> None:
        try:
            while True:
                self._flush_staged(session_id, channel)
                if channel.numbered:
                    # Numbered before anything pending (those were emitted after a disown).
                    await self._gather(channel)
                    await self._write_numbered(session_id, channel)
                elif channel.pending or channel.fold:
                    channel.fold = False
                    batch = coalesce(channel.pending)
                    channel.pending = []
                    stamped = await self._persist(session_id, batch, channel.handed_out)
                    if session_id in self._baseline and stamped:
                        await self._deliver_watched(session_id, stamped)
                    else:
                        for event in stamped:
                            self._deliver(event)
                elif channel.owner is not None and channel.next_sequence is None:
                    await self._start_numbering(session_id, channel)
                else:
                    return
        finally:
            # Also reached when the loop shuts down mid-write: the next emit starts a new pump.
            channel.pump = None
            channel.hurry.clear()
            channel.idle.set()
            if not channel.numbered and not channel.staged:
                channel.written.set()

    async def _persist(
        self, session_id: str, batch: list[EventPayload], floor: int
    ) -> list[StampedEvent]:
        clock = self._lease_clock() if self._lease_clock is not None else None
        try:
            return await self._store.run(
                lambda s: s.append_events(session_id, batch, clock=clock, floor=floor)
            )
        except asyncio.CancelledError:
            raise
        except StoreError as error:  # a damaged file, a full disk: explained, no traceback
            _log.warning("could not persist %d event(s): %s", len(batch), error.message)
            return []
        except Exception:
            # Losing a batch is better than wedging every later event behind it; the message
            # transcript (written separately) stays the source of truth.
            _log.exception("could not persist %d event(s) for session %s", len(batch), session_id)
            return []

    async def _deliver_watched(self, session_id: str, stamped: list[StampedEvent]) -> None:
        """Deliver a local batch of a watched session after any gap other processes left."""
        async with self._lock(session_id):
            after = self.delivered_through(session_id)
            first = stamped[0].sequence_number
            if first > after + 1:
                gap = await self._store.run(
                    lambda s: s.events_after(session_id, after, first - after - 1)
                )
                for event in gap:
                    self._deliver(event)
            for event in stamped:
                if event.sequence_number > self._delivered.get(session_id, 0):
                    self._deliver(event)
