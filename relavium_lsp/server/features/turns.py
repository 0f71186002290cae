"""Running a turn for ``relavium/sendMessage``: waiting for it, or answering at once.

The waiting form answers when the turn settles (and a ``$/cancelRequest`` aborts the turn).
The non-waiting form (``wait: false``) answers as soon as the turn's ``session:turn_started``
event has gone out, with the user message's sequence number; the turn runs on in the
background and settles as the ``session:turn_completed`` event — so no request stays open for
the length of a turn, whatever the client's request timeout.

A plain LSP client (one that shows no ``relavium/sessionEvent``) that started a turn through
a command is told the answer with ``window/showMessage`` when the turn settles.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from relavium_lsp.contracts.content import ContentPart
from relavium_lsp.contracts.events import StampedEvent, TurnResult, TurnStarted
from relavium_lsp.contracts.wire import ProgressToken, SendMessageAccepted, SendMessageResult
from relavium_lsp.errors import SessionBusy
from relavium_lsp.server.features.lifecycle import get_engine
from relavium_lsp.server.features.progress import turn_progress

if TYPE_CHECKING:
    from relavium_lsp.engine.api import Engine
    from relavium_lsp.server.core import RelaviumServer

_log = logging.getLogger(__name__)
MAX_SHOWN_ANSWER_CHARS = 4000


@dataclass(frozen=True)
class TurnRequest:
    """One message to send, and how the client wants to follow the turn."""

    session_id: str
    text: str
    attachments: Sequence[ContentPart] = ()
    progress_token: ProgressToken | None = None
    # Tell a plain client the outcome with window/showMessage (turns started by commands).
    announce: bool = False


async def run_turn(ls: RelaviumServer, request: TurnRequest) -> SendMessageResult:
    """Run the turn and answer with its settled result."""
    return SendMessageResult.from_turn(await _run_with_progress(ls, request))


async def start_turn(ls: RelaviumServer, request: TurnRequest) -> SendMessageAccepted:
    """Start the turn and answer once it has begun; it settles in the background."""
    return await _start_turn(ls, await get_engine(ls), request)


async def _start_turn(
    ls: RelaviumServer, engine: Engine, request: TurnRequest
) -> SendMessageAccepted:
    session_id = request.session_id
    await engine.session(session_id)  # an unknown id is the request's error, not the turn's
    if engine.is_running(session_id):
        # Checked before watching for turn_started, so the event seen can only be ours.
        raise SessionBusy(f"session {session_id} is already running a turn")
    loop = asyncio.get_running_loop()
    started: asyncio.Future[StampedEvent] = loop.create_future()

    def on_event(event: StampedEvent) -> None:
        payload = event.payload
        if (
            isinstance(payload, TurnStarted)
            and not started.done()
            # Ours, not one another window started in the same session meanwhile.
            and engine.running_turn_sequence(session_id) == payload.user_message_sequence
        ):
            started.set_result(event)

    remove_tap = ls.state.taps.add(session_id, on_event)
    turn = asyncio.create_task(_run_in_background(ls, request))
    ls.state.background_turns.add(turn)
    turn.add_done_callback(_forget(ls))
    first: set[asyncio.Future[Any]] = {turn, started}
    try:
        await asyncio.wait(first, return_when=asyncio.FIRST_COMPLETED)
    finally:
        remove_tap()
    error = turn.exception() if turn.done() and not turn.cancelled() else None
    if error is not None:
        raise error  # refused before it began: busy, ended, an empty message…
    if not started.done():
        return SendMessageAccepted()
    event = started.result()
    assert isinstance(event.payload, TurnStarted)
    return SendMessageAccepted(
        user_message_sequence=event.payload.user_message_sequence,
        turn_started_sequence=event.sequence_number,
    )


def _forget(ls: RelaviumServer) -> Callable[[asyncio.Task[None]], None]:
    def done(turn: asyncio.Task[None]) -> None:
        ls.state.background_turns.discard(turn)
        # Retrieved here so that a refusal (answered as the request's error) is not reported
        # again by asyncio as an exception nobody looked at.
        if not turn.cancelled() and turn.exception() is not None:
            _log.info("turn not run: %s", type(turn.exception()).__name__)

    return done


async def _run_in_background(ls: RelaviumServer, request: TurnRequest) -> None:
    result = await _run_with_progress(ls, request)
    if request.announce and ls.state.plain_client:
        _announce(ls, result)


async def _run_with_progress(ls: RelaviumServer, request: TurnRequest) -> TurnResult:
    engine = await get_engine(ls)
    session_id = request.session_id
    title = (await engine.session(session_id)).record.title or "Relavium"
    async with turn_progress(ls, session_id, title, request.progress_token) as settled:
        result = await engine.send(session_id, request.text, request.attachments)
        settled.append(result)
    return result


def _announce(ls: RelaviumServer, result: TurnResult) -> None:
    if result.error is not None:
        kind, message = types.MessageType.Error, f"Relavium: {result.error.message}"
    elif result.stop_reason == "aborted":
        kind, message = types.MessageType.Info, "Relavium: the turn was aborted."
    else:
        text = result.text.strip() or "(no text in the answer)"
        if len(text) > MAX_SHOWN_ANSWER_CHARS:
            text = text[:MAX_SHOWN_ANSWER_CHARS] + "…"
        kind, message = types.MessageType.Info, f"Relavium: {text}"
    ls.window_show_message(types.ShowMessageParams(type=kind, message=message))
