"""Cancelling the consumer closes the HTTP connection, and the server sees it go."""

from __future__ import annotations

import asyncio

import pytest

from relavium_lsp.llm.fallback import ChainEntry, stream_with_fallback
from relavium_lsp.llm.seam import StopChunk, TextDelta
from tests.unit.llm.llm_helpers import anthropic, collect, openai, request
from tests.unit.llm.wire_servers import (
    SSE_HEADERS,
    ScriptedResponse,
    anthropic_events,
    anthropic_stream,
    openai_events,
    openai_stream,
)

ADAPTERS = ["openai", "anthropic"]


def stalled_after_text(kind):
    events = openai_events(text=["first"]) if kind == "openai" else anthropic_events(text=["first"])
    cut = 2 if kind == "openai" else 4  # the first text delta is out, the answer is not
    return ScriptedResponse(headers=SSE_HEADERS, body=events[:cut], ending="stall")


def provider_for(kind, server, client):
    # A long timeout: only cancellation can end these calls quickly.
    return (openai if kind == "openai" else anthropic)(server, client, timeout_s=60)


def complete(kind):
    return openai_stream(text=["again"]) if kind == "openai" else anthropic_stream(text=["again"])


@pytest.mark.parametrize("kind", ADAPTERS)
async def test_closing_the_stream_closes_the_connection(kind, server, client):
    server.script(stalled_after_text(kind), complete(kind))
    provider = provider_for(kind, server, client)
    stream = provider.stream(request(model="m"))
    first = await anext(stream)
    assert first == TextDelta(text="first")
    await stream.aclose()
    # The provider's own timeout is 60 s: a disconnect well before it can only come from aclose.
    assert await server.wait_for_disconnect(0, within_s=30)
    # The shared client is still healthy afterwards.
    again = await collect(provider.stream(request(model="m")))
    assert isinstance(again[-1], StopChunk)


@pytest.mark.parametrize("kind", ADAPTERS)
async def test_cancelling_the_consumer_task_closes_the_connection(kind, server, client):
    server.script(stalled_after_text(kind))
    provider = provider_for(kind, server, client)
    got_first = asyncio.Event()

    async def consume() -> None:
        async for chunk in provider.stream(request(model="m")):
            if isinstance(chunk, TextDelta):
                got_first.set()

    task = asyncio.create_task(consume())
    await got_first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await server.wait_for_disconnect(0, within_s=5)


@pytest.mark.parametrize("kind", ADAPTERS)
async def test_cancelling_through_the_fallback_chain_closes_the_connection(kind, server, client):
    server.script(stalled_after_text(kind))
    chain = [ChainEntry(provider_for(kind, server, client), "m")]
    got_first = asyncio.Event()

    async def consume() -> None:
        async for item in stream_with_fallback(chain, request(model="ignored")):
            if isinstance(item, TextDelta):
                got_first.set()

    task = asyncio.create_task(consume())
    await got_first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await server.wait_for_disconnect(0, within_s=5)
    assert server.requests[0].json()["model"] == "m"


async def test_closing_a_recording_closes_the_inner_connection_and_records_nothing(
    server, client, tmp_path
):
    from relavium_lsp.llm.cassette import RecordingProvider

    server.script(stalled_after_text("openai"))
    recorder = RecordingProvider(provider_for("openai", server, client), tmp_path / "c.json")
    stream = recorder.stream(request(model="m"))
    assert await anext(stream) == TextDelta(text="first")
    await stream.aclose()
    assert await server.wait_for_disconnect(0, within_s=5)
    assert recorder.calls == []
    assert not (tmp_path / "c.json").exists()
