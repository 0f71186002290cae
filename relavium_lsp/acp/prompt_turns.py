"""The tasks driving prompt turns: at most one per session, cancellable exactly once.

A prompt's turn runs in its own task (``Engine.send``), so that
``session/cancel`` — or a ``cancelled`` permission outcome — can stop it from outside:
cancelling that task aborts the engine turn, which rolls it back and settles it with
``turn_completed{aborted}`` before the task ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from relavium_lsp.contracts.events import TurnResult
from relavium_lsp.errors import SessionBusy


@dataclass
class _Running:
    task: asyncio.Task[TurnResult]
    cancel_requested: bool = False


class PromptTurns:
    """The running prompt turns of one connection."""

    def __init__(self) -> None:
        self._running: dict[str, _Running] = {}
        self._all: set[asyncio.Task[TurnResult]] = set()

    def start(
        self, session_id: str, turn: Coroutine[Any, Any, TurnResult]
    ) -> asyncio.Task[TurnResult]:
        """Run ``turn`` as the session's prompt turn; refused while another one runs."""
        current = self._running.get(session_id)
        if current is not None and not current.task.done():
            turn.close()
            raise SessionBusy(f"a prompt is already running in session {session_id}")
        task = asyncio.create_task(turn, name=f"acp-prompt-{session_id}")
        running = self._running[session_id] = _Running(task)
        self._all.add(task)

        def finished(done: asyncio.Task[TurnResult]) -> None:
            self._all.discard(done)
            if self._running.get(session_id) is running:
                del self._running[session_id]

        task.add_done_callback(finished)
        return task

    def cancel(self, session_id: str) -> bool:
        """Cancel the session's running turn (once); ``True`` when one is being cancelled."""
        running = self._running.get(session_id)
        if running is None or running.task.done():
            return False
        if not running.cancel_requested:
            running.cancel_requested = True
            running.task.cancel()
        return True

    async def close(self) -> None:
        """Cancel every running turn and wait until each has settled."""
        tasks = list(self._all)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
