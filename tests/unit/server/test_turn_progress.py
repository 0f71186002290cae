"""Work-done progress never delays a turn, nor competes with its start (issue 25).

A server-created token is asked for at the turn's first event after ``session:turn_started``
(or after a short delay when none comes), never while the turn is starting; ``begin`` follows
the ``create`` request without waiting for the client's answer; a refused token gets nothing
more; a client's own token begins at once.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import pytest
from lsprotocol import types

from relavium_lsp.contracts.events import (
    AgentToken,
    EventPayload,
    StampedEvent,
    TokenUsage,
    TurnResult,
    TurnStarted,
)
from relavium_lsp.server.features import progress as progress_module
from relavium_lsp.server.features.progress import turn_progress
from relavium_lsp.server.state import ServerState


@dataclass
class FakeProgress:
    """pygls's ``work_done_progress`` and ``protocol.send_request``, recording the calls."""

    calls: list[str] = field(default_factory=list)
    tokens: dict[Any, Any] = field(default_factory=dict)
    answers: list[Future[Any]] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    begun: asyncio.Event = field(default_factory=asyncio.Event)

    def send_request(self, method: str, params: Any) -> Future[Any]:
        assert method == types.WINDOW_WORK_DONE_PROGRESS_CREATE
        self.calls.append("create")
        self.created.append(params.token)
        answer: Future[Any] = Future()
        self.answers.append(answer)
        return answer

    def begin(self, token: str, value: Any) -> None:
        assert token == self.created[-1]
        self.calls.append("begin")
        self.begun.set()

    def report(self, token: str, value: Any) -> None:
        self.calls.append(f"report {value.message}")

    def end(self, token: str, value: Any) -> None:
        self.calls.append("end")


@dataclass
class FakeServer:
    work_done_progress: FakeProgress
    protocol: FakeProgress
    state: ServerState = field(default_factory=ServerState)
    client_capabilities: types.ClientCapabilities = field(
        default_factory=lambda: types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=True)
        )
    )


def fake_server(*, supports_progress: bool = True) -> FakeServer:
    calls = FakeProgress()
    server = FakeServer(calls, calls)
    if not supports_progress:
        server.client_capabilities = types.ClientCapabilities()
    return server


def event(payload: EventPayload, sequence: int) -> StampedEvent:
    return StampedEvent(
        session_id="s",
        sequence_number=sequence,
        timestamp="2026-11-27T01:00:00.000000Z",
        payload=payload,
    )


def settled() -> TurnResult:
    return TurnResult(stop_reason="stop", tokens_used=TokenUsage())


@pytest.fixture(autouse=True)
def no_create_by_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only events ask for the token here, unless a test says otherwise."""
    monkeypatch.setattr(progress_module, "PROGRESS_CREATE_DELAY_S", 3600.0)


async def test_the_token_is_asked_for_after_the_turn_started_and_begins_without_the_answer() -> (
    None
):
    server = fake_server()
    progress = server.work_done_progress
    async with turn_progress(server, "s", "title", None) as results:  # type: ignore[arg-type]
        assert progress.calls == []  # nothing while the turn is starting
        server.state.taps.deliver(event(TurnStarted(user_message_sequence=1), 2))
        assert progress.calls == []  # its own start is not the signal
        server.state.taps.deliver(event(AgentToken(token="a", model="m"), 3))
        assert progress.calls == ["create", "begin"]  # the client has not answered yet
        server.state.taps.deliver(event(AgentToken(token="b", model="m"), 4))
        progress.answers[0].set_result(None)
        server.state.taps.deliver(event(AgentToken(token="c", model="m"), 5))
        results.append(settled())
    assert progress.calls == ["create", "begin", "report writing…", "end"]
    assert len(progress.created) == 1


async def test_without_an_event_the_token_is_asked_for_after_the_delay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(progress_module, "PROGRESS_CREATE_DELAY_S", 0.0)
    server = fake_server()
    progress = server.work_done_progress
    async with turn_progress(server, "s", "title", None) as results:  # type: ignore[arg-type]
        await progress.begun.wait()
        server.state.taps.deliver(event(AgentToken(token="a", model="m"), 3))
        results.append(settled())
    assert progress.calls == ["create", "begin", "report writing…", "end"]


async def test_a_turn_over_before_any_event_sends_nothing() -> None:
    server = fake_server()
    progress = server.work_done_progress
    async with turn_progress(server, "s", "title", None) as results:  # type: ignore[arg-type]
        server.state.taps.deliver(event(TurnStarted(user_message_sequence=1), 2))
        results.append(settled())
    server.state.taps.deliver(event(AgentToken(token="late", model="m"), 3))
    assert progress.calls == []
    assert not server.state.taps._taps, "no tap is left behind"


async def test_a_refused_token_gets_nothing_more() -> None:
    server = fake_server()
    progress = server.work_done_progress
    async with turn_progress(server, "s", "title", None) as results:  # type: ignore[arg-type]
        server.state.taps.deliver(event(AgentToken(token="a", model="m"), 3))
        progress.answers[0].set_exception(RuntimeError("client refused"))
        server.state.taps.deliver(event(AgentToken(token="b", model="m"), 4))
        results.append(settled())
    assert progress.calls == ["create", "begin"]


async def test_a_client_without_progress_support_is_never_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(progress_module, "PROGRESS_CREATE_DELAY_S", 0.0)
    server = fake_server(supports_progress=False)
    async with turn_progress(server, "s", "title", None) as results:  # type: ignore[arg-type]
        server.state.taps.deliver(event(AgentToken(token="a", model="m"), 3))
        results.append(settled())
    assert server.work_done_progress.calls == []


async def test_a_client_token_begins_at_once_without_a_create() -> None:
    server = fake_server()
    progress = server.work_done_progress
    progress.created.append("client-token")
    async with turn_progress(server, "s", "title", "client-token") as results:  # type: ignore[arg-type]
        assert progress.calls == ["begin"]
        results.append(settled())
    assert progress.calls == ["begin", "end"]
