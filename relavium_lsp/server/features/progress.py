"""``$/progress`` work-done progress for a running turn.

The token is the request's ``workDoneToken`` when the client sent one; otherwise the server
creates one with ``window/workDoneProgress/create`` when the client supports that. Between
begin and end, the turn's events become short reports ("running read_file", "waiting for
approval: write_file", …), each sent only when it differs from the last.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from lsprotocol import types

from relavium_lsp.contracts.events import (
    AgentApprovalRequested,
    AgentToolCall,
    AgentToolResult,
    EventPayload,
    StampedEvent,
    TurnResult,
)
from relavium_lsp.contracts.wire import ProgressToken

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer

_log = logging.getLogger(__name__)
PROGRESS_CREATE_TIMEOUT_S = 2.0


def report_for(payload: EventPayload) -> str | None:
    """What the progress report says after this event (``None``: unchanged)."""
    if payload.type == "agent:token":
        return "writing…"
    if payload.type == "agent:reasoning":
        return "thinking…"
    if isinstance(payload, AgentToolCall):
        return f"running {payload.tool_id}"
    if isinstance(payload, AgentApprovalRequested):
        return f"waiting for approval: {payload.tool_id}"
    if isinstance(payload, AgentToolResult):
        return f"{payload.tool_id} {'done' if payload.success else 'failed'}"
    return None


def end_message(result: TurnResult | None) -> str:
    """The closing message: how the turn ended."""
    if result is None:
        return "stopped"
    if result.error is not None:
        return f"failed: {result.error.message}"
    return {"stop": "done", "aborted": "aborted"}.get(result.stop_reason, result.stop_reason)


def _no_tap() -> None:
    """Nothing to remove before :meth:`TurnProgress.begin`."""


class TurnProgress:
    """Progress for one turn: ``begin`` once a token is there, ``end`` when the turn settles."""

    def __init__(self, ls: RelaviumServer, session_id: str, title: str) -> None:
        self._ls = ls
        self._session_id = session_id
        self._title = title
        self._token: ProgressToken | None = None
        self._last: str | None = None
        self._remove_tap: Callable[[], None] = _no_tap

    def begin(self, token: ProgressToken) -> None:
        """Send ``begin`` on ``token`` and start reporting the session's events."""
        self._token = token
        self._ls.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(title=self._title, message="thinking…", cancellable=False),
        )
        self._remove_tap = self._ls.state.taps.add(self._session_id, self._on_event)

    async def begin_when_created(self) -> None:
        """Ask the client for a token (when it supports that), then :meth:`begin`."""
        token = await _created_token(self._ls)
        if token is not None:
            self.begin(token)

    def end(self, result: TurnResult | None) -> None:
        """Stop reporting and send ``end`` (nothing when ``begin`` never happened)."""
        self._remove_tap()
        if self._token is None:
            return
        self._ls.work_done_progress.end(
            self._token, types.WorkDoneProgressEnd(message=end_message(result))
        )
        # pygls keeps a future per token it has seen; a finished turn's token is never reused.
        self._ls.work_done_progress.tokens.pop(self._token, None)

    def _on_event(self, event: StampedEvent) -> None:
        message = report_for(event.payload)
        if self._token is not None and message is not None and message != self._last:
            self._last = message
            self._ls.work_done_progress.report(
                self._token, types.WorkDoneProgressReport(message=message)
            )


@contextlib.asynccontextmanager
async def turn_progress(
    ls: RelaviumServer, session_id: str, title: str, token: ProgressToken | None
) -> AsyncIterator[list[TurnResult]]:
    """Progress around a turn; append the turn's result to the yielded list for ``end``.

    A server-created token is asked for alongside the turn, never before it: the turn (and a
    non-waiting request's answer) must not wait for the client to accept a progress token.
    """
    progress = TurnProgress(ls, session_id, title)
    creating: asyncio.Task[None] | None = None
    if token is not None:
        progress.begin(token)
    else:
        creating = asyncio.create_task(progress.begin_when_created())
    settled: list[TurnResult] = []
    try:
        yield settled
    finally:
        if creating is not None and not creating.done():
            creating.cancel()  # the turn is over before the client accepted a token
        progress.end(settled[-1] if settled else None)


async def _created_token(ls: RelaviumServer) -> str | None:
    """A server-created token, when the client supports work-done progress and accepts it."""
    window = ls.client_capabilities.window
    if window is None or not window.work_done_progress:
        return None
    token = f"relavium-turn-{uuid.uuid4().hex}"
    try:
        await asyncio.wait_for(ls.work_done_progress.create_async(token), PROGRESS_CREATE_TIMEOUT_S)
    except asyncio.CancelledError:
        raise
    except Exception:
        _log.info("the client did not accept a progress token; continuing without progress")
        return None
    return token
