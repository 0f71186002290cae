"""``$/progress`` work-done progress for a running turn.

The token is the request's ``workDoneToken`` when the client sent one: ``begin`` goes out at
once. Otherwise, when the client supports ``window/workDoneProgress/create``, the server
creates one — but not while the turn is starting (issue 25). Asking for a token is an editor
round trip: the request, the editor's work to answer it, the answer read back. Made at the
start of a turn, all of it competed with building and sending the model request, about 1.5 ms
of the per-turn overhead on a busy 2-core machine. So the token is asked for at the turn's
first event after ``session:turn_started`` (the model is answering, or compaction began), or
:data:`PROGRESS_CREATE_DELAY_S` into the turn if no event comes first — well within the time
any real model takes to answer, so the editor shows the progress as it would have. A turn
over before either sends nothing.

``begin`` follows the ``create`` request at once, without waiting for the answer (as
rust-analyzer does): the editor handles its messages in order, so it knows the token by the
time ``begin`` arrives. An editor that refuses the token gets nothing more on it. Between
begin and end, the turn's events become short reports ("running read_file", "waiting for
approval: write_file", …), each sent only when it differs from the last.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from relavium_lsp.contracts.events import (
    AgentApprovalRequested,
    AgentToolCall,
    AgentToolResult,
    EventPayload,
    StampedEvent,
    TurnResult,
    TurnStarted,
)
from relavium_lsp.contracts.wire import ProgressToken

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer

_log = logging.getLogger(__name__)
# The latest a server-created token is asked for after the turn began (see the module doc).
PROGRESS_CREATE_DELAY_S = 0.05


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


def client_creates_tokens(ls: RelaviumServer) -> bool:
    """Whether the client supports ``window/workDoneProgress/create``."""
    window = ls.client_capabilities.window
    return window is not None and bool(window.work_done_progress)


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
        self._refused = False

    def begin(self, token: ProgressToken) -> None:
        """Send ``begin`` on ``token`` and start reporting the session's events."""
        self._remove_tap()
        self._token = token
        self._ls.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(title=self._title, message="thinking…", cancellable=False),
        )
        self._remove_tap = self._ls.state.taps.add(self._session_id, self._on_event)

    def create_later(self) -> None:
        """Ask for a token at the turn's first event after it started, or after a delay."""
        timer = asyncio.get_running_loop().call_later(PROGRESS_CREATE_DELAY_S, self._create)

        def on_event(event: StampedEvent) -> None:
            if not isinstance(event.payload, TurnStarted):
                self._create()

        remove_tap = self._ls.state.taps.add(self._session_id, on_event)

        def cancel() -> None:
            timer.cancel()
            remove_tap()

        self._remove_tap = cancel

    def end(self, result: TurnResult | None) -> None:
        """Stop reporting and send ``end`` (nothing when ``begin`` never happened)."""
        self._remove_tap()
        self._remove_tap = _no_tap
        if self._token is None:
            return
        if not self._refused:
            self._ls.work_done_progress.end(
                self._token, types.WorkDoneProgressEnd(message=end_message(result))
            )
        # pygls keeps a future per token it has seen; a finished turn's token is never reused.
        self._ls.work_done_progress.tokens.pop(self._token, None)

    def _create(self) -> None:
        """Ask the client for a token and ``begin`` on it without waiting for the answer."""
        if self._token is not None:
            return
        token = f"relavium-turn-{uuid.uuid4().hex}"
        answer: Future[Any] = self._ls.protocol.send_request(
            types.WINDOW_WORK_DONE_PROGRESS_CREATE, types.WorkDoneProgressCreateParams(token=token)
        )
        answer.add_done_callback(self._on_answer)
        self.begin(token)

    def _on_answer(self, answer: Future[Any]) -> None:
        if answer.cancelled() or answer.exception() is not None:
            # Refused: the client has no such progress; send nothing more on the token.
            _log.info("the client did not accept a progress token; continuing without progress")
            self._refused = True

    def _on_event(self, event: StampedEvent) -> None:
        message = report_for(event.payload)
        if self._refused or self._token is None or message is None or message == self._last:
            return
        self._last = message
        self._ls.work_done_progress.report(
            self._token, types.WorkDoneProgressReport(message=message)
        )


@contextlib.asynccontextmanager
async def turn_progress(
    ls: RelaviumServer, session_id: str, title: str, token: ProgressToken | None
) -> AsyncIterator[list[TurnResult]]:
    """Progress around a turn; append the turn's result to the yielded list for ``end``.

    A server-created token is asked for once the turn is under way, never before it: the
    turn (and a non-waiting request's answer) must not wait for, or compete with, the
    client's round trip (see the module doc).
    """
    progress = TurnProgress(ls, session_id, title)
    if token is not None:
        progress.begin(token)
    elif client_creates_tokens(ls):
        progress.create_later()
    settled: list[TurnResult] = []
    try:
        yield settled
    finally:
        progress.end(settled[-1] if settled else None)
