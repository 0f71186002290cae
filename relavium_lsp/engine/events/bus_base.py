"""The state every part of the event bus shares, and delivery to its listeners.

:class:`~relavium_lsp.engine.events.bus.EventBus` is put together from this base, the numbering of
owned sessions (``engine/events/numbering.py``) and its own pump and watching. Only the bus
modules use it; everyone else imports :mod:`relavium_lsp.engine.events.bus`.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable

from relavium_lsp.contracts.events import StampedEvent
from relavium_lsp.engine.events.channel import Channel
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.rows.leases import LeaseClock

Listener = Callable[[StampedEvent], None]
_log = logging.getLogger(__name__)


class BusBase(ABC):
    """The bus's state: its store, per-session channels, listeners and what was delivered."""

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

    @abstractmethod
    async def _pump(self, session_id: str, channel: Channel) -> None:
        """Write and deliver what the channel holds until it is empty (``EventBus``)."""


def call_listener(listener: Listener, event: StampedEvent) -> None:
    """One subscriber's failure must not stop delivery to the others."""
    try:
        listener(event)
    except Exception:
        _log.exception("event listener failed on %s", event.type)
