"""The session event bus: one place that stamps, persists and delivers events.

Every event is appended to the durable ``session_events`` log *before* any subscriber sees
it, and sequence numbers are allocated inside that database transaction — so they are
gapless per session even when several server processes share one database, and a client
that missed something can always fetch it back with :meth:`EventBus.events_after`.

Persistence is write-behind with adaptive batching: :meth:`EventBus.emit` never blocks; a
per-session pump writes whatever has queued up in one transaction, then delivers it. While a
write is in flight new events accumulate, so under a fast token stream batches grow instead
of the stream slowing down. Consecutive ``agent:token`` (and ``agent:reasoning``) deltas of
the same model in a batch are merged into one event — coalesced, never reordered or dropped.

A *watched* session (one this process serves) also gets the events other processes write:
:meth:`EventBus.catch_up` reads the durable log past the newest sequence delivered, and a
local batch whose numbers jump past that first delivers the gap from the log — so every
listener sees one gapless sequence, in order, whichever process wrote it (``docs/design.md``
§3.1).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from relavium_lsp.contracts.events import AgentReasoning, AgentToken, EventPayload, StampedEvent
from relavium_lsp.errors import DatabaseCorrupted, StoreError
from relavium_lsp.store.async_store import AsyncSessionStore

Listener = Callable[[StampedEvent], None]
Unsubscribe = Callable[[], None]
BACKLOG_PAGE = 1000
_log = logging.getLogger(__name__)


@dataclass
class _Channel:
    pending: list[EventPayload] = field(default_factory=list)
    pump: asyncio.Task[None] | None = None
    idle: asyncio.Event = field(default_factory=asyncio.Event)


def coalesce(payloads: Sequence[EventPayload]) -> list[EventPayload]:
    """Merge runs of same-model token (or reasoning) deltas, keeping every other event."""
    merged: list[EventPayload] = []
    for payload in payloads:
        previous = merged[-1] if merged else None
        if (
            isinstance(payload, AgentToken)
            and isinstance(previous, AgentToken)
            and previous.model == payload.model
        ):
            merged[-1] = AgentToken(token=previous.token + payload.token, model=payload.model)
        elif (
            isinstance(payload, AgentReasoning)
            and isinstance(previous, AgentReasoning)
            and previous.model == payload.model
        ):
            merged[-1] = AgentReasoning(text=previous.text + payload.text, model=payload.model)
        else:
            merged.append(payload)
    return merged


class EventBus:
    """Stamps, persists and delivers session events in order."""

    def __init__(self, store: AsyncSessionStore) -> None:
        self._store = store
        self._channels: dict[str, _Channel] = {}
        self._listeners: list[Listener] = []
        # Per session: the newest sequence delivered here, where watching began, and a lock
        # that keeps local and read-back deliveries of one session in order.
        self._delivered: dict[str, int] = {}
        self._baseline: dict[str, int] = {}
        self._delivery_locks: dict[str, asyncio.Lock] = {}

    def watched(self) -> list[str]:
        """The sessions whose events from other processes this bus delivers."""
        return list(self._baseline)

    def delivered_through(self, session_id: str) -> int:
        """The newest sequence number of a watched session this bus has caught up to."""
        return max(self._delivered.get(session_id, 0), self._baseline.get(session_id, 0))

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
                    self._deliver(event)
                count += len(page)
                if len(page) < BACKLOG_PAGE:
                    return count

    def _lock(self, session_id: str) -> asyncio.Lock:
        lock = self._delivery_locks.get(session_id)
        if lock is None:
            lock = self._delivery_locks[session_id] = asyncio.Lock()
        return lock

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
                _call(listener, event)

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
        """Queue an event for persistence and delivery (never blocks)."""
        channel = self._channels.get(session_id)
        if channel is None:
            channel = self._channels[session_id] = _Channel()
        channel.pending.append(payload)
        channel.idle.clear()
        if channel.pump is None:
            channel.pump = asyncio.create_task(self._pump(session_id, channel))

    def release(self, session_id: str) -> None:
        """Forget an idle session's queue and lock (its live object was dropped, issue 16).

        Only what is idle goes: a queue with events in flight or a held lock stays. Emitting
        again later simply starts a new queue. What is being watched stays watched.
        """
        channel = self._channels.get(session_id)
        if channel is not None and not channel.pending and channel.pump is None:
            del self._channels[session_id]
        lock = self._delivery_locks.get(session_id)
        if lock is not None and not lock.locked():
            del self._delivery_locks[session_id]

    async def drain(self, session_id: str) -> None:
        """Wait until every event emitted so far for the session is persisted and delivered."""
        channel = self._channels.get(session_id)
        if channel is not None and (channel.pending or channel.pump is not None):
            await channel.idle.wait()

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

    async def _pump(self, session_id: str, channel: _Channel) -> None:
        try:
            while channel.pending:
                batch = coalesce(channel.pending)
                channel.pending = []
                stamped = await self._persist(session_id, batch)
                if session_id in self._baseline and stamped:
                    await self._deliver_watched(session_id, stamped)
                else:
                    for event in stamped:
                        self._deliver(event)
        finally:
            # Also reached when the loop shuts down mid-write: the next emit starts a new pump.
            channel.pump = None
            channel.idle.set()

    async def _persist(self, session_id: str, batch: list[EventPayload]) -> list[StampedEvent]:
        try:
            return await self._store.run(lambda s: s.append_events(session_id, batch))
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

    def _deliver(self, event: StampedEvent) -> None:
        session_id = event.session_id
        if event.sequence_number > self._delivered.get(session_id, 0):
            self._delivered[session_id] = event.sequence_number
        for listener in list(self._listeners):
            _call(listener, event)


def _call(listener: Listener, event: StampedEvent) -> None:
    """One subscriber's failure must not stop delivery to the others."""
    try:
        listener(event)
    except Exception:
        _log.exception("event listener failed on %s", event.type)
