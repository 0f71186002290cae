"""While a turn starts, background store work waits (``engine/quiet_start.py``, issue 25).

The engine's ``send`` holds the store's quiet gate until the turn's provider request is
written, and lets go on every other way out. The shared-log watcher defers its trips and
its notifications while the gate is held, and catches up once it opens. Every test proves
an order of events; gate limits are set to an hour so that only a release can open it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from relavium_lsp.contracts.events import StampedEvent, TurnResult, TurnStarted
from relavium_lsp.contracts.wire import SessionListChange
from relavium_lsp.engine.leases import LeaseKeeper, LeaseSettings
from relavium_lsp.errors import SessionNotFound
from relavium_lsp.llm.seam import LlmChunk, LlmRequest
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.testing.loopback import ReceivedRequest, ScriptedResponse
from tests.unit.engine.engine_harness import (
    CountingProvider,
    Harness,
    engine,
    openai_provider,
    scripted,
    text_reply,
    until,
)
from tests.unit.llm.wire_servers import LoopbackServer, openai_stream

WAIT_S = 30.0
HOUR_S = 3600.0


def engine_store(h: Harness) -> AsyncSessionStore:
    store: AsyncSessionStore = h.engine._services.store
    store.quiet_gate.limit_s = HOUR_S
    return store


class BlockedProvider(CountingProvider):
    """A provider that speaks no HTTP and answers only once ``go`` is set."""

    def __init__(self) -> None:
        super().__init__(scripted(text_reply("late"))._inner)
        self.asked = asyncio.Event()
        self.go = asyncio.Event()

    async def stream(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        self.asked.set()
        await self.go.wait()
        async for chunk in super().stream(request):
            yield chunk


async def test_the_gate_is_held_from_send_until_the_request_is_written(tmp_path: Path) -> None:
    arrived = threading.Event()
    answer = threading.Event()

    def respond(request: ReceivedRequest) -> ScriptedResponse:
        arrived.set()
        answer.wait(WAIT_S)  # the provider holds its answer: the turn cannot end meanwhile
        return openai_stream(text=["done"])

    with LoopbackServer(responder=respond) as server:
        async with (
            httpx.AsyncClient() as client,
            engine(tmp_path, openai_provider(server.url + "/v1", client)) as h,
        ):
            store = engine_store(h)
            session = (await h.start()).record.id
            held_at_start: list[bool] = []

            def on_event(event: StampedEvent) -> None:
                if isinstance(event.payload, TurnStarted):
                    held_at_start.append(store.quiet_gate.quiet_until() is not None)

            await h.engine.subscribe(on_event, session_id=session, after_sequence=0)

            async def front_end() -> TurnResult:
                # A front end's own hold (the LSP server's) ends with the engine's.
                with h.engine.turn_starting():
                    return await h.engine.send(session, "hello")

            turn = asyncio.ensure_future(front_end())
            assert await asyncio.to_thread(arrived.wait, WAIT_S)
            # Written: the gate opens (both holds end) while the turn still waits for its answer.
            await until(lambda: store.quiet_gate.quiet_until() is None, "the gate to open")
            assert not turn.done()
            answer.set()
            assert (await asyncio.wait_for(turn, WAIT_S)).stop_reason == "stop"
            assert held_at_start == [True]


async def test_the_gate_opens_when_send_is_refused_or_cancelled(tmp_path: Path) -> None:
    provider = BlockedProvider()
    async with engine(tmp_path, provider) as h:
        store = engine_store(h)
        with pytest.raises(SessionNotFound):
            await h.engine.send("no-such-session", "hello")
        assert store.quiet_gate.quiet_until() is None
        session = (await h.start()).record.id
        turn = asyncio.ensure_future(h.engine.send(session, "hello"))
        await asyncio.wait_for(provider.asked.wait(), WAIT_S)
        assert store.quiet_gate.quiet_until() is not None  # no HTTP: nothing was "written"
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        assert store.quiet_gate.quiet_until() is None


async def test_the_gate_opens_when_a_turn_without_http_settles(tmp_path: Path) -> None:
    async with engine(tmp_path, scripted(text_reply("one"))) as h:
        store = engine_store(h)
        session = (await h.start()).record.id
        assert (await h.engine.send(session, "hello")).stop_reason == "stop"
        assert store.quiet_gate.quiet_until() is None


async def test_the_watcher_waits_while_a_turn_starts_and_catches_up_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELAVIUM_WATCH_INTERVAL_S", "0.01")
    async with engine(tmp_path, scripted()) as h:
        store = engine_store(h)
        changes: list[SessionListChange] = []
        h.engine.watch_sessions(changes.extend)
        session = (await h.start()).record.id
        await until(lambda: len(changes) == 1, "the new session announced")
        with store.turn_starting():
            await store.run(lambda s: None)  # a look begun before the hold has ended by now
            # Another window renames the session while our turn is starting.
            await h.store.run(lambda s: s.rename_session(session, "renamed elsewhere"))
            deferred = store.quiet_gate.deferrals
            while store.quiet_gate.deferrals < deferred + 3:  # looks fell due, were skipped
                await store.run(lambda s: None)
            assert [c.kind for c in changes] == ["created"]
        await until(lambda: len(changes) == 2, "the rename, once the gate opened")
        assert [(c.session_id, c.kind) for c in changes] == [
            (session, "created"),
            (session, "renamed"),
        ]


async def test_a_lease_heartbeat_waits_while_a_turn_starts(tmp_path: Path) -> None:
    async with engine(tmp_path, scripted()) as h:
        store = engine_store(h)
        session = (await h.start()).record.id
        keeper = LeaseKeeper(store, LeaseSettings(timeout_s=HOUR_S, heartbeat_s=0.001))
        token = keeper.new_token()
        await store.run(lambda s: s.acquire_lease(session, token, keeper.clock()))

        async def beat_at() -> float:
            lease = await store.run(lambda s: s.read_lease(session))
            assert lease is not None
            return lease.heartbeat_at

        first = await beat_at()
        with store.turn_starting():
            deferred = store.quiet_gate.deferrals
            heartbeat = keeper.heartbeat(session, token, lambda reason: None)
            await until(lambda: store.quiet_gate.deferrals > deferred, "the beat to wait")
            assert await beat_at() == first
        beats: list[float] = []

        async def renewed() -> bool:
            beats.append(await beat_at())
            return beats[-1] > first

        while not await renewed():  # store round trips until the beat's commit is seen
            pass
        heartbeat.cancel()
        await asyncio.gather(heartbeat, return_exceptions=True)
