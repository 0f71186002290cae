"""Benchmark of the session engine, in process: ``python -m bench.engine [--quick]``.

Measured through the real runtime — encrypted store, event bus, tool registry, the
OpenAI-compatible adapter — against a loopback provider (:mod:`bench.paced`):

1. per-turn overhead: ``send_message`` called → the provider's HTTP request arrives (p50/p99
   over every turn) — persisting the user message durably, loading the tail within budget,
   building the prompt and opening the request;
2. per-token latency at realistic rates (50, 200 and 1,000 tokens/s): the provider writes a
   delta → the event carrying it reaches a bus subscriber (p99) — HTTP, SSE parsing, stamping
   and delivery (the durable event log is written behind, §3.1);
3. where each token's time goes at each rate (:mod:`bench.token_stages`): provider write →
   adapter delta → subscriber (numbered in memory under the turn's lease), and, off the
   token's path, delivered → written behind to the event log;
4. throughput of an unpaced 10,000-token turn, as a ratio to the adapter alone reading the same
   stream (what the engine adds on top of parsing).

The LSP-level rows (``bench.lsp``) measure the same paths through a real server process and
carry the goals; these rows say how much of that is the engine.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from bench.paced import PER_TURN_GOAL_MS, Latencies, PacedProvider, Turn, percentile
from bench.report import Goal, Row, print_rows
from bench.token_stages import StageClock, instrument
from relavium_lsp.contracts.content import TextPart
from relavium_lsp.contracts.events import AgentToken, StampedEvent
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.engine.api import open_engine
from relavium_lsp.llm.openai_compat import OpenAICompatibleProvider
from relavium_lsp.llm.seam import LlmMessage, LlmRequest
from relavium_lsp.testing.loopback import LoopbackServer
from relavium_lsp.tools.host import FilesystemHost

RATES = (50, 200, 1_000)


def write_config(home: Path, workspace: Path, base_url: str) -> None:
    """A user config with one loopback provider and a workspace agent that uses it."""
    (home / ".relavium").mkdir(parents=True, exist_ok=True)
    (home / ".relavium" / "config.toml").write_text(
        # One session runs every measured turn: lift the default 50-turn limit.
        f'[chat]\nmax_turns = 1000\n\n[providers.loop]\nkind = "openai"\nbase_url = "{base_url}"\n'
        "allow_local_endpoint = true\n",
        encoding="utf-8",
    )
    agents = workspace / ".relavium" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "bench.agent.yaml").write_text(
        "id: bench\nname: Bench\nmodel: gpt-4o-mini\nprovider: loop\ntools: [read_file]\n",
        encoding="utf-8",
    )


async def run(quick: bool) -> list[Row]:
    """Drive the engine through every case; the rows."""
    provider = PacedProvider()
    short_turns = 15 if quick else 60
    paced_tokens = {rate: int(rate * (3 if quick else 12)) for rate in RATES}
    burst = 3_000 if quick else 10_000
    with tempfile.TemporaryDirectory() as scratch, LoopbackServer(responder=provider) as server:
        root = Path(scratch)
        home, workspace = root / "home", root / "ws"
        workspace.mkdir()
        os.environ["HOME"] = str(home)
        os.environ["RELAVIUM_HOME"] = str(home / ".relavium")
        write_config(home, workspace, server.url + "/v1")
        clock = StageClock()
        instrument(clock)
        engine = await open_engine(FilesystemHost())
        # As the server does once its engine is open (server/features/lifecycle.py): what lives
        # for the process's lifetime leaves the cyclic GC, whose full passes would walk it all.
        gc.collect()
        gc.freeze()
        current: list[Turn] = []
        stage_rows: list[Row] = []
        latencies = {rate: Latencies() for rate in RATES}
        live: list[Latencies] = []

        def on_event(event: StampedEvent) -> None:
            if isinstance(event.payload, AgentToken) and live:
                live[0].record(current[0], event.payload.token, time.perf_counter())

        await engine.subscribe(on_event)
        await engine.subscribe(clock.on_event)
        session = await engine.start(
            context=SessionContext(working_dir=str(workspace)), agent_ref="bench"
        )
        overheads: list[float] = []

        async def turn(tokens: int, rate: float | None, into: Latencies | None) -> float:
            current[:] = [provider.plan(tokens, rate)]
            live[:] = [into] if into is not None else []
            started = time.perf_counter()
            result = await engine.send(session.id, f"turn {len(overheads)}: stream please")
            finished = time.perf_counter()
            assert result.stop_reason == "stop", result.error  # a failed turn would skew every row
            overheads.append(current[0].arrived - started)
            return finished - current[0].arrived

        for _ in range(short_turns):
            await turn(20, None, None)
        for rate in RATES:
            clock.stamps.clear()
            clock.enabled = True
            await turn(paced_tokens[rate], rate, latencies[rate])
            clock.enabled = False
            stage_rows += clock.rows(current[0], rate)
        engine_seconds = await turn(burst, None, None)
        await engine.close()
        adapter_seconds = await adapter_alone(provider, server.url, burst)

    rows = [
        Row(
            "engine overhead per turn (send → provider request), p99",
            percentile(overheads[1:], 0.99) * 1000,
            "ms",
            anchor="its p50",
            anchor_value=statistics.median(overheads[1:]) * 1000,
            goal=Goal(PER_TURN_GOAL_MS, on="value", strict=True),
            note=f"{len(overheads) - 1} turns after the first; the user message is committed "
            "before the request, its fsync overlaps it",
        ),
        Row(
            "engine overhead, the first turn after start",
            overheads[0] * 1000,
            "ms",
            note="one-time: first HTTP connection, first statements, lazily loaded code",
        ),
    ]
    for rate in RATES:
        rows.append(
            Row(
                f"engine per-token latency at {rate:,} tok/s (provider write → bus), p99",
                latencies[rate].p(0.99),
                "ms",
                anchor="its p50",
                anchor_value=latencies[rate].p(0.5),
                note=f"{len(latencies[rate].values):,} tokens",
            )
        )
    rows += stage_rows
    rows.append(
        Row(
            f"engine throughput, unpaced {burst:,}-token turn",
            burst / engine_seconds,
            "tok/s",
            anchor="adapter alone",
            anchor_value=burst / adapter_seconds,
        )
    )
    return rows


async def adapter_alone(provider: PacedProvider, base_url: str, tokens: int) -> float:
    """Seconds for the bare adapter to read an unpaced stream of ``tokens`` (best of 3)."""
    best = float("inf")
    async with httpx.AsyncClient() as client:
        alone = OpenAICompatibleProvider(
            "loop", base_url=base_url + "/v1", api_key=None, client=client, timeout_s=30
        )
        request = LlmRequest(
            model="gpt-4o-mini", messages=(LlmMessage(role="user", content=(TextPart(text="go"),)),)
        )
        for _ in range(3):
            provider.plan(tokens, None)
            begin = time.perf_counter()
            async for _chunk in alone.stream(request):
                pass
            best = min(best, time.perf_counter() - begin)
    return best


def rows(quick: bool) -> list[Row]:
    """The engine rows (``quick``: fewer turns, shorter paced streams)."""
    return asyncio.run(run(quick))


def main() -> None:
    """Run the benchmark and print its rows."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    print_rows(rows(parser.parse_args().quick))


if __name__ == "__main__":
    main()
