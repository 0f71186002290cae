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
import time
from collections import deque
from collections.abc import Callable

from relavium_lsp.contracts.events import EventPayload, StampedEvent
from relavium_lsp.engine.events import channel as channel_module
from relavium_lsp.engine.events.channel import Channel, LogState, coalesce
from relavium_lsp.errors import DatabaseCorrupted, StoreError
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.rows.leases import LeaseClock

__all__ = ["BACKLOG_PAGE", "EventBus", "Listener", "LogState", "Unsubscribe", "coalesce"]

Unsubscribe = Callable[[], None]
Listener = Callable[[StampedEvent], None]
BACKLOG_PAGE = 1000
_log = logging.getLogger(__name__)


def call_listener(listener: Listener, event: StampedEvent) -> None:
    """One subscriber's failure must not stop delivery to the others."""
    try:
        listener(event)
    except Exception:
        _log.exception("event listener failed on %s", event.type)


class EventBus:
    """Stamps, persists and delivers session events in order."""

    def __init__(
        self, store: AsyncSessionStore, lease_clock: Callable[[], LeaseClock] | None = None
    ) -> None:
        self._store = store
        # Tells the store a stale foreign lease (taken over) from a live one (inbox).
        self._lease_clock = lease_clock
        self._channels: dict[str, Channel] = {}
        self._listeners: list[Listener] = []
        # Events waiting to reach the listeners: a listener that emits does not get its
        # event delivered to the others before the one it is being told about.
        self._outbox: deque[StampedEvent] = deque()
        self._delivering = False
        # Per session: the newest sequence delivered here, where watching began, and a lock
        # that keeps local and read-back deliveries of one session in order.
        self._delivered: dict[str, int] = {}
        self._baseline: dict[str, int] = {}
        self._delivery_locks: dict[str, asyncio.Lock] = {}

    def delivered_through(self, session_id: str) -> int:
        """The newest sequence number of a watched session this bus has caught up to."""
        return max(self._delivered.get(session_id, 0), self._baseline.get(session_id, 0))

    def _lock(self, session_id: str) -> asyncio.Lock:
        lock = self._delivery_locks.get(session_id)
        if lock is None:
            lock = self._delivery_locks[session_id] = asyncio.Lock()
        return lock

    def _channel(self, session_id: str) -> Channel:
        channel = self._channels.get(session_id)
        if channel is None:
            channel = self._channels[session_id] = Channel()
        return channel

    def _kick(self, session_id: str, channel: Channel) -> None:
        channel.idle.clear()
        if channel.pump is None:
            channel.pump = asyncio.create_task(self._pump(session_id, channel))

    async def drain(self, session_id: str) -> None:
        """Wait until every event emitted so far for the session is persisted and delivered."""
        channel = self._channels.get(session_id)
        if channel is not None and (
            channel.pending
            or channel.staged
            or channel.numbered
            or channel.fold
            or channel.pump is not None
        ):
            channel.rush()
            await channel.idle.wait()

    def _deliver(self, event: StampedEvent) -> None:
        session_id = event.session_id
        if event.sequence_number > self._delivered.get(session_id, 0):
            self._delivered[session_id] = event.sequence_number
        self._outbox.append(event)
        if self._delivering:
            return  # a listener emitted: its event follows once this one reached everyone
        self._delivering = True
        try:
            while self._outbox:
                queued = self._outbox.popleft()
                for listener in list(self._listeners):
                    call_listener(listener, queued)
        finally:
            self._delivering = False

    def claim_position(self, session_id: str) -> int | None:
        """What a claim wants read with the lease: events after this (``None``: unwatched)."""
        return self.delivered_through(session_id) if session_id in self._baseline else None

    def claim(self, session_id: str, token: str, state: LogState | None = None) -> None:
        """Number the session's events here from now on: this process holds its lease.

        Call it after the commit that took the lease under ``token``. ``state`` is
        ``event_log_state(session, claim_position(), 0, token)`` read on the store's thread right
        after that commit (nobody else can append past it now): when nothing of this session
        is queued here, numbering starts at once. Otherwise events emitted until the pump
        has read the log's newest number are numbered by the database as before.
        """
        channel = self._channel(session_id)
        if channel.owner == token:
            return
        self._flush_staged(session_id, channel)  # numbered under the previous claim, if any
        channel.owner = token
        channel.next_sequence = None
        if (
            state is not None
            and not channel.pending
            and not channel.numbered
            and not channel.staged
            and channel.pump is None
            and not self._lock(session_id).locked()
        ):
            self._begin_numbering(session_id, channel, token, state)
            if channel.numbered:
                self._kick(session_id, channel)
            return
        self._kick(session_id, channel)

    async def disown(self, session_id: str) -> None:
        """Stop numbering the session here; returns once every numbered event is written.

        Call it before the lease is released: the database numbers every event emitted from
        now on, after the ones numbered here.
        """
        channel = self._channels.get(session_id)
        if channel is None or channel.owner is None:
            return
        self._flush_staged(session_id, channel)
        channel.owner = None
        channel.next_sequence = None
        channel.rush()
        await channel.written.wait()
        if channel.pending or channel.pump is not None:
            # What was emitted past the reservation: the database numbers it, under the lease.
            await self.drain(session_id)

    def handed_out(self, session_id: str) -> int:
        """The highest number this bus handed out for the session (0: none)."""
        channel = self._channels.get(session_id)
        return 0 if channel is None else channel.handed_out

    def fold_inbox(self, session_id: str) -> None:
        """Have the database number what waits in the session's inbox (after a release)."""
        channel = self._channel(session_id)
        channel.fold = True
        self._kick(session_id, channel)

    def owned_inboxes(self) -> dict[str, int]:
        """Session → newest inbox row numbered here, for every session numbered here."""
        return {
            session_id: channel.inbox_after
            for session_id, channel in self._channels.items()
            if channel.next_sequence is not None
        }

    async def take_inbox(self, session_id: str) -> int:
        """Number and deliver what other processes left in an owned session's inbox.

        The rows are only read here; they are deleted in the commit that writes them with
        their numbers, so a crash before it leaves them to be folded later. Returns how many.
        """
        channel = self._channels.get(session_id)
        if channel is None or channel.next_sequence is None:
            return 0
        token, after = channel.owner, channel.inbox_after
        rows = await self._store.run(lambda s: s.read_event_inbox(session_id, after))
        if channel.owner != token or channel.next_sequence is None:
            return 0  # released meanwhile: the rows stay in the inbox for the database
        self._flush_staged(session_id, channel)  # emitted before: numbered before
        count = 0
        for inbox_id, payload in rows:
            if inbox_id > channel.inbox_after:
                channel.inbox_after = inbox_id
                if not self._number(channel, session_id, payload, inbox_id):
                    break  # out of reserved numbers: the rest waits for the database
                count += 1
        if count:
            self._kick(session_id, channel)
        return count

    def _stage(
        self, channel: Channel, session_id: str, payload: EventPayload, inbox_id: int | None
    ) -> None:
        channel.staged.append((payload, inbox_id))
        channel.written.clear()
        if not channel.flush_scheduled:
            channel.flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush_staged, session_id, channel)

    def _flush_staged(self, session_id: str, channel: Channel) -> None:
        """Number and deliver what was emitted in the last turn of the loop, coalesced.

        Paced tokens arrive one per turn of the loop and go out alone, one hop later; a
        burst parsed from one read goes out as few events as a slow write once made of it.
        """
        channel.flush_scheduled = False
        if not channel.staged or channel.next_sequence is None:
            return
        staged, channel.staged = channel.staged, []
        ordered: list[tuple[EventPayload, int | None]] = []
        run: list[EventPayload] = []
        for payload, inbox_id in staged:
            if inbox_id is None:
                run.append(payload)
                continue
            ordered.extend((merged, None) for merged in coalesce(run))
            run = []
            ordered.append((payload, inbox_id))
        ordered.extend((merged, None) for merged in coalesce(run))
        for payload, inbox_id in ordered:
            if channel.next_sequence is None or not self._number(
                channel, session_id, payload, inbox_id
            ):
                # Out of reserved numbers: the database numbers it (an inbox row stays there).
                if inbox_id is None:
                    channel.pending.append(payload)

    def _number(
        self, channel: Channel, session_id: str, payload: EventPayload, inbox_id: int | None
    ) -> bool:
        """Number and deliver one event; ``False`` past the reservation (nothing numbered).

        Then the database numbers what comes next (persist, then deliver) until the pump
        claims a new reservation: a number handed out here is always durably reserved, so
        a takeover after this process died can never give it to another event.
        """
        sequence = channel.next_sequence
        assert sequence is not None
        if sequence > channel.reserved_through:
            channel.next_sequence = None
            channel.rush()  # what follows waits for the writes: stop gathering
            self._kick(session_id, channel)
            return False
        channel.next_sequence = sequence + 1
        channel.handed_out = sequence
        # The payload is a validated model already: no second validation per token.
        event = StampedEvent.model_construct(
            session_id=session_id,
            sequence_number=sequence,
            timestamp=channel_module.stamp_now(),
            payload=payload,
        )
        if not channel.numbered:
            channel.oldest_numbered = time.monotonic()
        channel.numbered.append(event)
        channel.inbox_ids.append(inbox_id)
        channel.written.clear()
        self._deliver(event)
        if (
            channel.gathering is not None
            and time.monotonic() - channel.oldest_numbered >= channel_module.WRITE_BEHIND_GATHER_S
        ):
            channel.end_gathering()  # on this token's wake-up, not a timer's of its own
        return True

    @staticmethod
    async def _gather(channel: Channel) -> None:
        """While the owner streams, let more numbered events join the next commit.

        An event numbered once the oldest unwritten one is ``WRITE_BEHIND_GATHER_S`` old ends
        it (``_number``); a timer only when none came by ``WRITE_BEHIND_LONGEST_S``; a drain,
        a disown or the reservation's end at once (``Channel.rush``).
        """
        age = time.monotonic() - channel.oldest_numbered
        if (
            channel.owner is None
            or channel.next_sequence is None  # the database numbers: events wait on writes
            or channel.pending
            or channel.hurry.is_set()
            or age >= channel_module.WRITE_BEHIND_GATHER_S  # they waited on the last write
        ):
            return
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        channel.gathering = waiter
        timer = loop.call_later(channel_module.WRITE_BEHIND_LONGEST_S - age, channel.end_gathering)
        try:
            await waiter
        finally:
            timer.cancel()
            channel.gathering = None

    async def _start_numbering(self, session_id: str, channel: Channel) -> None:
        """Read the log's newest number (the lease is ours: it can only grow from here).

        Nothing is pending or numbered here, so the log holds everything emitted so far;
        what other processes wrote and this bus has not delivered yet is delivered first.
        """
        token = channel.owner
        if token is None:
            return
        async with self._lock(session_id):
            after = self.delivered_through(session_id) if session_id in self._baseline else None
            try:
                floor = channel.handed_out
                state = await self._store.run(
                    lambda s: s.claim_event_numbers(session_id, token, after, floor)
                )
            except asyncio.CancelledError:
                raise
            except Exception:
                _log.warning(
                    "session %s: could not read the event log; the database numbers its events",
                    session_id,
                    exc_info=True,
                )
                if channel.owner == token:
                    channel.owner = None
                return
            if channel.owner != token or channel.pending or channel.numbered:
                return  # disowned, or emitted meanwhile (written first): the pump looks again
            if state[1] <= state[0]:
                channel.owner = None  # no reservation: the lease is not ours any more
                return
            # No await from the emptiness check above to here: nothing was written meanwhile.
            self._begin_numbering(session_id, channel, token, state)

    def _begin_numbering(
        self, session_id: str, channel: Channel, token: str, state: LogState
    ) -> None:
        """Deliver what others wrote up to the log's newest number, then number from there."""
        last, reserved, missed, inbox = state
        for event in missed:
            if event.sequence_number > self._delivered.get(session_id, 0):
                self._deliver(event)
        channel.next_sequence = max(last, channel.handed_out) + 1
        channel.reserved_through = reserved
        channel.stamp_token = token
        channel.inbox_after = 0
        for inbox_id, payload in inbox:
            channel.inbox_after = inbox_id
            if not self._number(channel, session_id, payload, inbox_id):
                break  # out of reserved numbers: the rest waits for the database

    async def _write_numbered(self, session_id: str, channel: Channel) -> None:
        """Write a batch of events numbered here, with their numbers (write-behind)."""
        batch, inbox_ids = channel.numbered, channel.inbox_ids
        channel.numbered, channel.inbox_ids = [], []
        token = channel.stamp_token
        assert token is not None
        clock = self._lease_clock() if self._lease_clock is not None else None
        kept: int | None = channel.reserved_through
        try:
            kept = await self._store.run(
                lambda s: s.append_numbered_events(session_id, batch, inbox_ids, token, clock)
            )
        except asyncio.CancelledError:
            raise
        except StoreError as error:
            # Delivered already; the log keeps a hole where these were (clients skip holes).
            _log.warning("could not persist %d event(s): %s", len(batch), error.message)
        except Exception:
            _log.exception("could not persist %d event(s) for session %s", len(batch), session_id)
        if kept is not None and channel.stamp_token == token:
            # The commit may have extended the reservation (off the token's path).
            channel.reserved_through = max(channel.reserved_through, kept)
        if kept is None and channel.stamp_token == token and channel.owner == token:
            # The lease was taken over: from now on the database (or the new owner) numbers.
            self._flush_staged(session_id, channel)
            channel.owner = None
            channel.next_sequence = None
        if not channel.numbered and not channel.staged:
            channel.written.set()

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
