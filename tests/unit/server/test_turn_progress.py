"""Work-done progress never delays a turn: the turn starts before the client accepts the token.

The client's answer to ``window/workDoneProgress/create`` is an editor round trip (issue 25:
per-turn overhead). The turn must start without it; the progress begins when it comes, and a
turn that ends first still waits for it so an accepted token gets its begin and end.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types

from relavium_lsp.server.features.sessions import turn_progress


@dataclass
class FakeProgress:
    answer: asyncio.Future[None]
    calls: list[str] = field(default_factory=list)

    def create_async(self, token: str) -> asyncio.Future[None]:
        self.calls.append("create")
        return self.answer

    def begin(self, token: str, value: Any) -> None:
        self.calls.append("begin")

    def end(self, token: str, value: Any) -> None:
        self.calls.append("end")


@dataclass
class FakeServer:
    work_done_progress: FakeProgress
    client_capabilities: types.ClientCapabilities = field(
        default_factory=lambda: types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=True)
        )
    )


async def test_the_turn_runs_before_the_client_answers() -> None:
    progress = FakeProgress(asyncio.get_running_loop().create_future())
    server = FakeServer(progress)
    async with turn_progress(server, "title"):  # type: ignore[arg-type]
        # The turn's body runs while the token is unanswered (a blocking create would never
        # get here: only this body answers it).
        assert "begin" not in progress.calls
        progress.answer.set_result(None)
    assert progress.calls == ["create", "begin", "end"]


async def test_a_turn_that_ends_first_waits_for_the_answer_then_ends_it() -> None:
    progress = FakeProgress(asyncio.get_running_loop().create_future())
    server = FakeServer(progress)

    async def answer_later() -> None:
        progress.answer.set_result(None)

    async with turn_progress(server, "title"):  # type: ignore[arg-type]
        asyncio.get_running_loop().call_soon(asyncio.ensure_future, answer_later())
    assert progress.calls == ["create", "begin", "end"]


async def test_a_refused_token_gets_no_begin_or_end() -> None:
    progress = FakeProgress(asyncio.get_running_loop().create_future())
    progress.answer.set_exception(RuntimeError("client refused"))
    server = FakeServer(progress)
    async with turn_progress(server, "title"):  # type: ignore[arg-type]
        pass
    assert progress.calls == ["create"]
