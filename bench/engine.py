"""Benchmark of the session engine: ``python -m bench.engine [--tokens N] [--turns N]``.

Prints numbers and ratios (never pass/fail), measured through the real engine — encrypted
store, event bus, tool registry, the OpenAI-compatible adapter — against a loopback server
that streams N tokens with no delay:

1. per-turn overhead: ``send_message`` called → the provider's HTTP request arrives at the
   loopback server (p50/p99 over several turns) — the cost of persisting the user message,
   loading the tail within budget, building the prompt and opening the request;
2. per-token latency: provider chunk parsed by the adapter → the event carrying it
   delivered to a bus subscriber (p50/p99 over every token) — the cost of stamping,
   persisting to the durable log and delivering;
3. end-to-end throughput of the streamed turn, as a ratio to the adapter alone reading the
   same stream (what the engine adds on top of parsing).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.content import TextPart
from relavium_lsp.contracts.events import AgentToken, StampedEvent
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.engine.api import key_lookup_for, open_engine
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.llm.openai_compat import OpenAICompatibleProvider
from relavium_lsp.llm.providers import resolve_chain
from relavium_lsp.llm.seam import LlmChunk, LlmMessage, LlmRequest, TextDelta
from relavium_lsp.testing.loopback import LoopbackServer, ReceivedRequest, ScriptedResponse
from relavium_lsp.testing.wire_scripts import openai_stream
from relavium_lsp.tools.host import FilesystemHost


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class ChunkClock:
    """Timestamps every text chunk as the adapter yields it (in the engine's process)."""

    def __init__(self, inner: OpenAICompatibleProvider) -> None:
        self._inner = inner
        self.provider_id = inner.provider_id
        self.capabilities = inner.capabilities
        self.chunk_times: list[tuple[int, float]] = []  # (cumulative chars, time)
        self._chars = 0

    def reset(self) -> None:
        self.chunk_times.clear()
        self._chars = 0

    def context_window(self, model: str) -> int:
        return self._inner.context_window(model)

    async def stream(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        async for chunk in self._inner.stream(request):
            if isinstance(chunk, TextDelta):
                self._chars += len(chunk.text)
                self.chunk_times.append((self._chars, time.perf_counter()))
            yield chunk


def write_config(home: Path, workspace: Path, base_url: str) -> None:
    (home / ".relavium").mkdir(parents=True, exist_ok=True)
    (home / ".relavium" / "config.toml").write_text(
        f'[providers.loop]\nkind = "openai"\nbase_url = "{base_url}"\n'
        "allow_local_endpoint = true\n",
        encoding="utf-8",
    )
    agents = workspace / ".relavium" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "bench.agent.yaml").write_text(
        "id: bench\nname: Bench\nmodel: gpt-4o-mini\nprovider: loop\ntools: [read_file]\n",
        encoding="utf-8",
    )


async def run(tokens: int, turns: int) -> None:
    pieces = [f"t{n} " for n in range(tokens)]
    arrivals: list[float] = []

    def respond(request: ReceivedRequest) -> ScriptedResponse:
        arrivals.append(time.perf_counter())
        return openai_stream(text=pieces, usage=(10, tokens))

    with tempfile.TemporaryDirectory() as scratch, LoopbackServer(responder=respond) as server:
        root = Path(scratch)
        home, workspace = root / "home", root / "ws"
        workspace.mkdir()
        os.environ["HOME"] = str(home)
        os.environ["RELAVIUM_HOME"] = str(home / ".relavium")
        write_config(home, workspace, server.url + "/v1")
        http = httpx.AsyncClient(follow_redirects=False)
        clocks: list[ChunkClock] = []

        def chain_with_clock(agent: AgentDefinition, config: WorkspaceConfig) -> list[ChainEntry]:
            # The configured chain, its first adapter wrapped to timestamp what it yields.
            chain = resolve_chain(
                agent,
                config.providers,
                config.default_model,
                client=http,
                key_lookup=key_lookup_for(config),
            )
            adapter = chain[0].provider
            assert isinstance(adapter, OpenAICompatibleProvider)
            clocks.append(ChunkClock(adapter))
            return [ChainEntry(provider=clocks[-1], model=chain[0].model), *chain[1:]]

        engine = await open_engine(FilesystemHost(), providers=chain_with_clock)
        delivered: list[tuple[int, float]] = []

        def on_event(event: StampedEvent) -> None:
            if isinstance(event.payload, AgentToken):
                before = delivered[-1][0] if delivered else 0
                delivered.append((before + len(event.payload.token), time.perf_counter()))

        await engine.subscribe(on_event)
        context = SessionContext(working_dir=str(workspace))
        session = await engine.start(context=context, agent_ref="bench")
        clock = clocks[-1]

        turn_overheads: list[float] = []
        stream_seconds: list[float] = []
        token_latencies: list[float] = []
        events_per_turn: list[int] = []
        for turn in range(turns):
            clock.reset()
            delivered.clear()
            started = time.perf_counter()
            result = await engine.send(session.id, f"turn {turn}: stream please")
            finished = time.perf_counter()
            assert result.stop_reason == "stop", result.error
            turn_overheads.append(arrivals[-1] - started)
            stream_seconds.append(finished - arrivals[-1])
            events_per_turn.append(len(delivered))
            cursor = 0
            for cumulative, produced in clock.chunk_times:
                while delivered[cursor][0] < cumulative:
                    cursor += 1
                token_latencies.append(delivered[cursor][1] - produced)
        await engine.close()
        await http.aclose()

        # The adapter alone on the same stream: the floor the engine builds on.
        raw: list[float] = []
        async with httpx.AsyncClient() as client:
            alone = OpenAICompatibleProvider(
                "loop", base_url=server.url + "/v1", api_key=None, client=client, timeout_s=30
            )
            request = LlmRequest(
                model="gpt-4o-mini",
                messages=(LlmMessage(role="user", content=(TextPart(text="go"),)),),
            )
            for _ in range(turns):
                begin = time.perf_counter()
                async for _chunk in alone.stream(request):
                    pass
                raw.append(time.perf_counter() - begin)

    ms = 1000.0
    print(f"engine benchmark: {turns} turns x {tokens:,} tokens from a loopback provider")
    print(
        "  per-turn overhead (send -> request at provider): "
        f"p50 {percentile(turn_overheads, 0.5) * ms:.2f} ms  "
        f"p99 {percentile(turn_overheads, 0.99) * ms:.2f} ms"
    )
    print(
        "  per-token latency (chunk -> subscriber):          "
        f"p50 {percentile(token_latencies, 0.5) * ms:.3f} ms  "
        f"p99 {percentile(token_latencies, 0.99) * ms:.3f} ms"
    )
    print(
        f"  events per turn: median {statistics.median(events_per_turn):,.0f} for {tokens:,} "
        "tokens (deltas coalesce while a log write is in flight)"
    )
    engine_rate = tokens / statistics.median(stream_seconds)
    adapter_rate = tokens / statistics.median(raw)
    print(
        f"  throughput: engine {engine_rate:,.0f} tokens/s vs adapter alone "
        f"{adapter_rate:,.0f} tokens/s (ratio {engine_rate / adapter_rate:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=7)
    arguments = parser.parse_args()
    asyncio.run(run(arguments.tokens, arguments.turns))


if __name__ == "__main__":
    main()
