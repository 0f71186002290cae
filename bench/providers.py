"""Provider adapter parse throughput against a loopback server, relative to raw httpx lines.

Run: ``python -m bench.providers [--deltas N] [--runs R]``. Prints numbers; never pass/fail.

A loopback server (in a child process, so it does not compete for this process's GIL)
streams one response of N text deltas as fast as the socket takes them — a Chat Completions
stream for the OpenAI-compatible adapter, a Messages stream for the Anthropic adapter. For
each format the same bytes are consumed three ways:

- raw httpx: ``async for line in response.aiter_lines()`` — the floor any SSE client pays;
- adapter: ``provider.stream(request)`` to the last chunk (SSE parsing, JSON decoding, chunk
  models, usage) — what the engine pays;
- parse only: the adapter's parsing fed from memory, no socket — its pure CPU cost.

The ratio is adapter time / raw httpx time (1.0 would mean parsing is free).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from collections.abc import Callable

import httpx

from relavium_lsp.contracts.content import TextPart
from relavium_lsp.llm.anthropic import AnthropicProvider, MessagesDecoder
from relavium_lsp.llm.openai_compat import ChatCompletionsDecoder, OpenAICompatibleProvider
from relavium_lsp.llm.seam import LlmMessage, LlmRequest, StopChunk, TextDelta
from relavium_lsp.testing.loopback import LoopbackServer, ScriptedResponse
from relavium_lsp.testing.wire_scripts import SSE_HEADERS, anthropic_events, openai_events

PIECE_BYTES = 16 * 1024


def stream_body(kind: str, deltas: int) -> bytes:
    texts = [f"tok{i % 1000} " for i in range(deltas)]
    events = openai_events(text=texts) if kind == "openai" else anthropic_events(text=texts)
    return b"".join(events)


def serve(kind: str, deltas: int) -> None:
    """Child process: answer every request with the same stream until stdin closes."""
    body = stream_body(kind, deltas)
    pieces = [body[i : i + PIECE_BYTES] for i in range(0, len(body), PIECE_BYTES)]

    def respond(request: object) -> ScriptedResponse:
        return ScriptedResponse(headers=SSE_HEADERS, body=pieces)

    with LoopbackServer(responder=respond) as server:
        print(server.url, flush=True)
        sys.stdin.read()


async def raw_lines(client: httpx.AsyncClient, url: str) -> int:
    count = 0
    async with client.stream("POST", url, json={}) as response:
        async for _line in response.aiter_lines():
            count += 1
    return count


async def adapter_chunks(provider: OpenAICompatibleProvider | AnthropicProvider) -> int:
    request = LlmRequest(
        model="bench", messages=(LlmMessage(role="user", content=(TextPart(text="go"),)),)
    )
    count = 0
    last = None
    async for chunk in provider.stream(request):
        count += isinstance(chunk, TextDelta)
        last = chunk
    assert isinstance(last, StopChunk), last
    return count


def parse_only(kind: str, body: bytes) -> int:
    decoder: ChatCompletionsDecoder | MessagesDecoder
    if kind == "openai":
        decoder = ChatCompletionsDecoder("bench", None)
    else:
        decoder = MessagesDecoder("bench", None)
    count = 0
    stopped = False
    for start in range(0, len(body), PIECE_BYTES):
        for chunk in decoder.feed(body[start : start + PIECE_BYTES]):
            count += isinstance(chunk, TextDelta)
            stopped = stopped or isinstance(chunk, StopChunk)
    stopped = stopped or any(isinstance(chunk, StopChunk) for chunk in decoder.finish())
    assert stopped
    return count


async def best_of(runs: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        result = work()
        if asyncio.iscoroutine(result):
            await result
        best = min(best, time.perf_counter() - started)
    return best


def measure(kind: str, deltas: int, runs: int) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.providers", "--serve", kind, "--deltas", str(deltas)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        base = child.stdout.readline().strip()
        body = stream_body(kind, deltas)
        raw, adapted, parsed = asyncio.run(time_all(kind, base, body, deltas, runs))
    finally:
        if child.stdin is not None:
            child.stdin.close()
        child.wait(timeout=30)
    report(kind, deltas, runs, len(body), raw, adapted, parsed)


async def time_all(
    kind: str, base: str, body: bytes, deltas: int, runs: int
) -> tuple[float, float, float]:
    async with httpx.AsyncClient(timeout=60) as client:
        if kind == "openai":
            provider: OpenAICompatibleProvider | AnthropicProvider = OpenAICompatibleProvider(
                "bench", base_url=f"{base}/v1", api_key=None, client=client, timeout_s=60
            )
        else:
            provider = AnthropicProvider(
                "bench", base_url=base, api_key=None, client=client, timeout_s=60
            )
        assert await adapter_chunks(provider) == deltas  # warm-up and correctness
        raw = await best_of(runs, lambda: raw_lines(client, f"{base}/raw"))
        adapted = await best_of(runs, lambda: adapter_chunks(provider))
        parsed = await best_of(runs, lambda: parse_only(kind, body))
    return raw, adapted, parsed


def report(
    kind: str, deltas: int, runs: int, size: int, raw: float, adapted: float, parsed: float
) -> None:
    megabytes = size / 1e6
    print(f"{kind} ({deltas:,} deltas, {megabytes:.1f} MB, best of {runs}):")
    for label, seconds in (("raw httpx lines", raw), ("adapter", adapted), ("parse only", parsed)):
        print(
            f"  {label:<16} {seconds * 1000:8.1f} ms  {deltas / seconds:12,.0f} deltas/s"
            f"  {megabytes / seconds:7.1f} MB/s"
        )
    print(f"  ratio adapter / raw httpx: {adapted / raw:.2f}x the time")
    print(f"  per delta: adapter {adapted / deltas * 1e6:.2f} µs, raw {raw / deltas * 1e6:.2f} µs")


def main() -> None:
    parser = argparse.ArgumentParser(description="provider adapter parse throughput")
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--serve", choices=("openai", "anthropic"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.serve:
        serve(arguments.serve, arguments.deltas)
        return
    for kind in ("openai", "anthropic"):
        measure(kind, arguments.deltas, arguments.runs)


if __name__ == "__main__":
    main()
