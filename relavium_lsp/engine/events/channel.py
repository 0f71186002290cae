"""The event bus's per-session queue, and the merging of token deltas (``engine/events/bus.py``).

A :class:`Channel` holds what one session's events are waiting for: numbering, delivery, the
durable write. Only the bus (``engine/events/bus.py``) uses it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from relavium_lsp.contracts.events import AgentReasoning, AgentToken, EventPayload, StampedEvent
from relavium_lsp.store.models import utc_timestamp

# What claiming a session's numbering reads from the log: the highest number given out, how
# far the lease may number (its durable reservation), the events after the claim position,
# and the inbox rows (``SessionStore.event_log_state``).
LogState = tuple[int, int, list[StampedEvent], list[tuple[int, EventPayload]]]
# How long the write-behind of a streaming owner gathers numbered events into one commit.
# One SQLCipher commit per paced token costs about a third of the server's CPU at 1,000
# tok/s, and that worker thread's work competes with the event loop for the GIL and the
# cores, lengthening the token tail (issue 25; bench/token_tail.py). The events are
# delivered already; only their durable write waits, and a drain or disown cuts it short.
# An event numbered once the oldest unwritten one is this old ends the gathering: a
# streaming owner's commits start on a wake-up the token brought anyway. A wake-up of its
# own (a timer) costs about 0.2 ms of CPU on a loaded machine, more than the commit's
# statements.
# 40 ms: a stream is written in at most ~25 commits a second; at 200 tok/s that is 15 %
# less CPU per token than 20 ms (bench of issue 25), and another window reads the tokens
# at most that much later (its watcher polls every 100 ms anyway).
WRITE_BEHIND_GATHER_S = 0.04
# When no event comes to end it (the stream paused, the turn is calling a tool), the
# gathering ends on a timer once the oldest unwritten event is this old.
WRITE_BEHIND_LONGEST_S = 0.06


def stamp_now(now: float | None = None) -> str:
    """``store.models.utc_timestamp()``'s text for the time ``now`` (default: this moment)."""
    return utc_timestamp(datetime.fromtimestamp(time.time() if now is None else now, UTC))


def set_event() -> asyncio.Event:
    """An event that starts set."""
    event = asyncio.Event()
    event.set()
    return event


@dataclass
class Channel:
    """One session's events on their way: to be numbered, delivered and written."""

    # Not numbered yet: the pump has the database number them.
    pending: list[EventPayload] = field(default_factory=list)
    # Owned: emitted in this turn of the event loop, not numbered yet (a fast burst of token
    # deltas is merged here, before anyone saw it); with the inbox row each came from.
    staged: list[tuple[EventPayload, int | None]] = field(default_factory=list)
    flush_scheduled: bool = False
    # Owned: numbered and delivered here, not written yet; and the inbox row each came from.
    numbered: list[StampedEvent] = field(default_factory=list)
    inbox_ids: list[int | None] = field(default_factory=list)
    # The lease token whose numbering was claimed (None: unowned), the token the numbered
    # events were stamped under, and the next number (None: the database numbers).
    owner: str | None = None
    stamp_token: str | None = None
    next_sequence: int | None = None
    # The highest number the lease lets this bus hand out (reserved durably, §3.1): past it
    # the database numbers again until a write-behind commit extended the reservation.
    reserved_through: int = 0
    # The highest number handed out here (above the log's newest only if a write failed):
    # whoever numbers next in this process numbers past it.
    handed_out: int = 0
    # Inbox rows up to this id are numbered here already.
    inbox_after: int = 0
    # Fold the inbox even with nothing pending (after the lease was released).
    fold: bool = False
    pump: asyncio.Task[None] | None = None
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    # Set while no numbered event waits to be written (or is being written).
    written: asyncio.Event = field(default_factory=set_event)
    # Set when someone waits for the writes (drain, disown): no more gathering.
    hurry: asyncio.Event = field(default_factory=asyncio.Event)
    # While the write-behind gathers: the future that ends it. And when the oldest event
    # of ``numbered`` was numbered (``time.monotonic``): the gathering's age.
    gathering: asyncio.Future[None] | None = None
    oldest_numbered: float = 0.0

    def rush(self) -> None:
        """Someone waits for the writes: stop gathering, now and until the pump idles."""
        self.hurry.set()
        self.end_gathering()

    def end_gathering(self) -> None:
        """Write what was gathered so far (the gathering, if any, ends)."""
        waiter = self.gathering
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


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
