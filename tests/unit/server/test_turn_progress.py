"""Work-done progress never delays a turn: the turn starts before the client accepts the token.

The client's answer to ``window/workDoneProgress/create`` is an editor round trip (issue 25:
per-turn overhead). The turn must start without it; the progress begins when it comes; a turn
that is over before the client answered sends neither ``begin`` nor ``end``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types

from relavium_lsp.contracts.events import TokenUsage, TurnResult
from relavium_lsp.server.features.progress import turn_progress
from relavium_lsp.server.state import ServerState


@dataclass
class FakeProgress:
    answer: asyncio.Future[None]
    calls: list[str] = field(default_factory=list)
    tokens: dict[Any, Any] = field(default_factory=dict)
    called: asyncio.Event = field(default_factory=asyncio.Event)

    def _record(self, call: str) -> None:
        self.calls.append(call)
        self.called.set()

    async def until(self, call: str) -> None:
        while call not in self.calls:
            self.called.clear()
            await self.called.wait()

    def create_async(self, token: str) -> asyncio.Future[None]:
        self._record("create")
        return self.answer

    def begin(self, token: str, value: Any) -> None:
        self._record("begin")

    def report(self, token: str, value: Any) -> None:
        self._record("report")

    def end(self, token: str, value: Any) -> None:
        self._record("end")


@dataclass
class FakeServer:
    work_done_progress: FakeProgress
    state: ServerState = field(default_factory=ServerState)
    client_capabilities: types.ClientCapabilities = field(
        default_factory=lambda: types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=True)
        )
    )


def settled() -> TurnResult:
    return TurnResult(stop_reason="stop", tokens_used=TokenUsage())


async def test_the_turn_runs_before_the_client_answers_and_progress_begins_after() -> None:
    progress = FakeProgress(asyncio.get_running_loop().create_future())
    server = FakeServer(progress)
    async with turn_progress(server, "s", "title", None) as results:  # type: ignore[arg-type]
        # The turn's body runs while the token is unanswered (a blocking create would never
        # get here: only this body answers it).
        await progress.until("create")
        assert progress.calls == ["create"]
        progress.answer.set_result(None)
        await progress.until("begin")
        results.append(settled())
    assert progress.calls == ["create", "begin", "end"]


async def test_a_turn_over_before_the_answer_sends_no_begin_or_end() -> None:
    progress = FakeProgress(asyncio.get_running_loop().create_future())
    server = FakeServer(progress)
    async with turn_progress(server, "s", "title", None) as results:  # type: ignore[arg-type]
        await progress.until("create")
        results.append(settled())
    progress.answer.set_result(None)
    assert progress.calls == ["create"]


async def test_a_refused_token_gets_no_begin_or_end() -> None:
    progress = FakeProgress(asyncio.get_running_loop().create_future())
    progress.answer.set_exception(RuntimeError("client refused"))
    server = FakeServer(progress)
    async with turn_progress(server, "s", "title", None) as results:  # type: ignore[arg-type]
        await progress.until("create")
        results.append(settled())
    assert progress.calls == ["create"]


async def test_a_client_token_begins_at_once_without_a_create() -> None:
    progress = FakeProgress(asyncio.get_running_loop().create_future())
    server = FakeServer(progress)
    async with turn_progress(server, "s", "title", "client-token") as results:  # type: ignore[arg-type]
        assert progress.calls == ["begin"]
        results.append(settled())
    assert progress.calls == ["begin", "end"]
