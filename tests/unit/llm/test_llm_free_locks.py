"""httpcore's free locks and set events no longer yield the event loop (llm/free_locks.py).

Counted in event-loop iterations, not time: a callback that re-schedules itself counts the
loop's turns while a request is sent on a warm connection.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from relavium_lsp.llm.free_locks import take_free_locks_eagerly
from relavium_lsp.llm.request_writes import coalesce_request_writes
from tests.unit.llm.llm_helpers import collect, openai, request, text_of
from tests.unit.llm.test_llm_request_writes import RecordingBackend, recorded
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedResponse, openai_stream


class _Turns:
    """Counts the event loop's iterations from :meth:`start`."""

    def __init__(self) -> None:
        self.count = 0
        self._handle: asyncio.Handle | None = None

    def _tick(self) -> None:
        self.count += 1
        self._handle = asyncio.get_running_loop().call_soon(self._tick)

    def start(self) -> None:
        self.count = 0
        self._handle = asyncio.get_running_loop().call_soon(self._tick)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()


async def test_a_request_on_a_warm_connection_is_written_without_yielding(
    server: LoopbackServer,
) -> None:
    assert take_free_locks_eagerly()
    turns = _Turns()
    written_at: list[int] = []
    async with httpx.AsyncClient() as http:
        backend: RecordingBackend = recorded(http)
        coalesce_request_writes(http)
        backend.on_write = lambda: written_at.append(turns.count)
        server.script(*(ScriptedResponse(body=b"ok") for _ in range(2)))
        assert (await http.post(f"{server.url}/warm", content=b"1")).text == "ok"
        turns.start()
        try:
            assert (await http.post(f"{server.url}/x", content=b"2")).text == "ok"
        finally:
            turns.stop()
    # Warm-up request, then the measured one: one joined write each, and the loop did not
    # turn between sending the second request and its socket write.
    assert written_at == [0, 0]


async def test_contended_connections_still_wait_their_turn(server: LoopbackServer) -> None:
    assert take_free_locks_eagerly()
    server.script(*(openai_stream(text=[f"n{n}"]) for n in range(4)))
    limits = httpx.Limits(max_connections=1)
    async with httpx.AsyncClient(limits=limits) as http:
        provider = openai(server, http)
        results = await asyncio.gather(
            *(collect(provider.stream(request(f"r{n}"))) for n in range(4))
        )
    assert sorted(text_of(chunks) for chunks in results) == ["n0", "n1", "n2", "n3"]
    assert len(server.requests) == 4


async def test_a_cancelled_call_still_stops_and_frees_the_connection(
    server: LoopbackServer,
) -> None:
    assert take_free_locks_eagerly()
    server.script(
        ScriptedResponse(headers={"content-type": "text/event-stream"}, ending="stall"),
        openai_stream(text=["after"]),
    )
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=1)) as http:
        provider = openai(server, http, timeout_s=30)
        stalled = asyncio.create_task(collect(provider.stream(request("a"))))
        await asyncio.to_thread(server.wait_for_requests, 1)
        stalled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await stalled
        assert text_of(await collect(provider.stream(request("b")))) == "after"


def test_installing_twice_is_harmless() -> None:
    assert take_free_locks_eagerly()
    assert take_free_locks_eagerly()
