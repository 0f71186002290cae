"""Owned numbering: while this process holds a session's turn lease, the bus numbers its events.

Numbered in memory, delivered at once, written behind with their numbers; only numbers the
lease row reserved durably are handed out, and other processes' appends wait in the session's
inbox until this bus folds them in (``docs/design.md`` §3.1, §7.1). A mixin of
:class:`~relavium_lsp.engine.events.bus.EventBus`.
"""

from __future__ import annotations

import asyncio
import logging
import time

from relavium_lsp.contracts.events import EventPayload, StampedEvent
from relavium_lsp.engine.events import channel as bus_channel
from relavium_lsp.engine.events.bus_base import BusBase
from relavium_lsp.engine.events.channel import Channel, LogState, coalesce
from relavium_lsp.errors import StoreError

_log = logging.getLogger(__name__)


class OwnedNumbering(BusBase):
    """Claiming, numbering and writing behind the events of sessions this process owns."""

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
            timestamp=bus_channel.stamp_now(),
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
            and time.monotonic() - channel.oldest_numbered >= bus_channel.WRITE_BEHIND_GATHER_S
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
            or age >= bus_channel.WRITE_BEHIND_GATHER_S  # they waited on the last write
        ):
            return
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        channel.gathering = waiter
        timer = loop.call_later(bus_channel.WRITE_BEHIND_LONGEST_S - age, channel.end_gathering)
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
