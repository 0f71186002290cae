"""Ordered, non-blocking delivery of ``session/update`` notifications.

Engine events arrive through a synchronous bus listener, but sending a notification is a
coroutine. The outbox queues updates and one pump task writes them in order, so the client
sees exactly the order the engine produced. :meth:`UpdateOutbox.flush` waits until
everything queued so far has been written — a prompt answers only after its updates.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionInfoUpdate,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

SessionUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
    | AgentPlanUpdate
)
UpdateSender = Callable[[str, SessionUpdate], Awaitable[None]]
_log = logging.getLogger(__name__)


class UpdateOutbox:
    """A FIFO of ``(session id, update)`` pairs written by a single pump task."""

    def __init__(self, send: UpdateSender) -> None:
        self._send = send
        self._pending: deque[tuple[str, SessionUpdate]] = deque()
        self._pump: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._closed = False

    def push(self, session_id: str, update: SessionUpdate) -> None:
        """Queue one update (never blocks); dropped once the outbox is closed."""
        if self._closed:
            return
        self._pending.append((session_id, update))
        self._idle.clear()
        if self._pump is None:
            self._pump = asyncio.create_task(self._run(), name="acp-outbox")

    async def flush(self) -> None:
        """Wait until every update queued before this call has been written (or dropped)."""
        if self._pump is not None or self._pending:
            await self._idle.wait()

    async def close(self) -> None:
        """Write what is queued, then refuse further updates."""
        await self.flush()
        self._closed = True

    async def _run(self) -> None:
        try:
            while self._pending:
                session_id, update = self._pending.popleft()
                try:
                    await self._send(session_id, update)
                except ConnectionError:
                    # The client went away: nothing later can be delivered either.
                    _log.info("client disconnected; dropping %d update(s)", len(self._pending))
                    self._pending.clear()
                except Exception:
                    _log.exception("could not send a session/update for %s", session_id)
        finally:
            self._pump = None
            self._idle.set()
