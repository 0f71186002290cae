"""Where the per-token p99 goes at 1,000 tok/s: a per-token timestamp trace of a real server.

``python -m bench.token_tail`` — measurement only (never in the product). It spawns
``relavium-lsp serve`` through this module's ``serve`` mode, which wraps seams of the server
process for its life and writes what it saw to a JSON file when it exits:

- per token number: ``adapter`` (the turn got the delta: HTTP read, SSE cut, JSON decode
  done), ``forward`` (the bus delivers the numbered event to the LSP layer), ``sent`` (pygls's
  write + flush to stdout returned);
- every cyclic-GC collection (generation, start, end) via ``gc.callbacks``;
- every job on the store's worker thread (start, end): the write-behind commits.

The client notes when it read each token; the provider notes when it wrote it. The report
splits every token's latency into those stages, then looks at the slowest percent: which
stage grew, and whether a GC collection or a worker job overlapped it.

``$RELAVIUM_BENCH_WRITE_WINDOW`` in the server's environment runs an experiment instead of
the product as it is: ``nogc`` (no cyclic GC once the engine is open), ``nowrite`` (the
write-behind writes nothing) or a number of seconds (an extra wait before each write-behind
commit). Compare such servers side by side against the relay to see what a change would buy.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import gc
import itertools
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.paced import Latencies, token_numbers

TRACE_ENV = "RELAVIUM_BENCH_TRACE"
WINDOW_ENV = "RELAVIUM_BENCH_WRITE_WINDOW"
_SENT = re.compile(rb"t(\d+) ")


def serve() -> int:
    """The server, instrumented; the trace goes to ``$RELAVIUM_BENCH_TRACE`` at exit."""
    import pygls.io_

    from bench.paced import token_numbers
    from relavium_lsp.cli import main
    from relavium_lsp.engine import model_calls as calls_module
    from relavium_lsp.llm.seam import TextDelta
    from relavium_lsp.server.features import lifecycle
    from relavium_lsp.store.async_store import AsyncSessionStore

    stamps: dict[str, list[tuple[int, float]]] = {"adapter": [], "forward": [], "sent": []}
    collections: list[tuple[int, float, float]] = []
    jobs: list[tuple[float, float]] = []
    started: dict[str, float] = {}

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started["gc"] = time.perf_counter()
        else:
            collections.append((info["generation"], started.get("gc", 0.0), time.perf_counter()))

    gc.callbacks.append(on_gc)

    original_stream = calls_module.stream_with_fallback

    async def timed_stream(*arguments: Any, **keywords: Any) -> Any:
        async for item in original_stream(*arguments, **keywords):
            if isinstance(item, TextDelta):
                now = time.perf_counter()
                for number in token_numbers(item.text):
                    stamps["adapter"].append((number, now))
            yield item

    calls_module.stream_with_fallback = timed_stream  # type: ignore[assignment]

    original_forward = lifecycle._forward

    def timed_forward(ls: Any, event: Any) -> None:
        if event.type == "agent:token":
            now = time.perf_counter()
            for number in token_numbers(event.payload.token):
                stamps["forward"].append((number, now))
        original_forward(ls, event)

    lifecycle._forward = timed_forward

    original_write = pygls.io_.StdoutWriter.write

    def timed_write(self: Any, data: bytes) -> None:
        original_write(self, data)
        now = time.perf_counter()
        for match in _SENT.findall(data):
            stamps["sent"].append((int(match), now))

    pygls.io_.StdoutWriter.write = timed_write  # type: ignore[method-assign]

    original_call = AsyncSessionStore._call

    def timed_call(self: Any, fn: Any) -> Any:
        began = time.perf_counter()
        try:
            return original_call(self, fn)
        finally:
            jobs.append((began, time.perf_counter()))

    AsyncSessionStore._call = timed_call  # type: ignore[method-assign]

    experiment = os.environ.get(WINDOW_ENV, "0")
    if experiment == "nogc":
        # Experiment: no cyclic GC at all once the engine is open (see lifecycle.get_engine).
        original_freeze = gc.freeze

        def freeze_then_disable() -> None:
            original_freeze()
            gc.disable()

        gc.freeze = freeze_then_disable
    if experiment == "nowrite":
        # Experiment: the write-behind writes nothing (the worker thread stays idle).
        from relavium_lsp.engine import bus as bus_module

        async def dropped(self: Any, session_id: str, channel: Any) -> None:
            channel.numbered, channel.inbox_ids = [], []
            channel.written.set()

        bus_module.EventBus._write_numbered = dropped  # type: ignore[method-assign]
    window = float(experiment) if experiment[0].isdigit() else 0.0
    if window:
        # Experiment: let the write-behind gather for ``window`` s before each commit.
        from relavium_lsp.engine import bus as bus_module

        original_numbered = bus_module.EventBus._write_numbered

        async def gathered(self: Any, session_id: str, channel: Any) -> None:
            await asyncio.sleep(window)
            await original_numbered(self, session_id, channel)

        bus_module.EventBus._write_numbered = gathered  # type: ignore[method-assign]

    def dump() -> None:
        from collections import Counter

        kinds = Counter(type(o).__qualname__ for o in gc.get_objects(2))
        heap = {
            "gen2": len(gc.get_objects(2)),
            "frozen": gc.get_freeze_count(),
            "kinds": kinds.most_common(15),
            "counts": gc.get_count(),
            "threshold": gc.get_threshold(),
        }
        out = os.environ.get(TRACE_ENV)
        if out:
            Path(out).write_text(
                json.dumps({"stamps": stamps, "gc": collections, "jobs": jobs, "heap": heap}),
                "utf-8",
            )

    atexit.register(dump)
    return main(["serve"])


def analyse(trace: dict[str, Any], writes: dict[int, float], reads: dict[int, float]) -> None:
    """Print the stage split at p50/p99 and what the slowest percent had in common."""
    from bench.paced import percentile

    stamps = trace["stamps"]
    order = ["write", "adapter", "forward", "sent", "read"]
    times = {"write": writes, **stamps, "read": reads}
    numbers = [n for n in writes if all(n in times[s] for s in order)]
    total = {n: reads[n] - writes[n] for n in numbers}
    print(f"{len(numbers)} tokens traced end to end")
    for before, after in itertools.pairwise(order):
        spans = [times[after][n] - times[before][n] for n in numbers]
        print(
            f"  {before:>7} → {after:<7} p50 {percentile(spans, 0.5) * 1000:6.3f} ms"
            f"  p99 {percentile(spans, 0.99) * 1000:6.3f} ms  max {max(spans) * 1000:7.2f} ms"
        )
    p99 = percentile(list(total.values()), 0.99)
    print(
        f"  total p50 {percentile(list(total.values()), 0.5) * 1000:.3f} ms"
        f"  p99 {p99 * 1000:.3f} ms"
    )
    slow = [n for n in numbers if total[n] >= p99]
    print(f"slowest {len(slow)} tokens (≥ p99): mean stage split")
    for before, after in itertools.pairwise(order):
        spans = [times[after][n] - times[before][n] for n in slow]
        print(f"  {before:>7} → {after:<7} mean {sum(spans) / max(1, len(spans)) * 1000:6.3f} ms")
    gcs = trace["gc"]
    jobs = trace["jobs"]
    near_gc = sum(1 for n in slow if any(s <= reads[n] and e >= writes[n] for _g, s, e in gcs))
    near_job = sum(1 for n in slow if any(s <= reads[n] and e >= writes[n] for s, e in jobs))
    base_job = sum(1 for n in numbers if any(s <= reads[n] and e >= writes[n] for s, e in jobs))
    print(
        f"GC collections during the run: {len(gcs)} by gen "
        f"{[sum(1 for g, *_ in gcs if g == gen) for gen in (0, 1, 2)]}, "
        f"max {max((e - s for _g, s, e in gcs), default=0) * 1000:.2f} ms; "
        f"overlapping a slow token: {near_gc}/{len(slow)}"
    )
    print(
        f"store worker jobs: {len(jobs)},"
        f" p50 {percentile([e - s for s, e in jobs], 0.5) * 1000:.2f} ms"
        f" max {max((e - s for s, e in jobs), default=0) * 1000:.2f} ms; overlapping a slow token"
        f" {near_job}/{len(slow)} (all tokens: {base_job}/{len(numbers)})"
    )
    # Clusters: runs of consecutive slow tokens.
    runs, current = [], 0
    for n in sorted(numbers):
        if total[n] >= p99:
            current += 1
        elif current:
            runs.append(current)
            current = 0
    if current:
        runs.append(current)
    print("heap at exit:", trace["heap"])
    first, last = min(writes.values()), max(reads.values())
    gcs = [(g, s, e) for g, s, e in gcs if first <= s <= last]
    print(
        f"GC collections inside the measured turns by gen "
        f"{[sum(1 for g, *_ in gcs if g == gen) for gen in (0, 1, 2)]}"
    )
    near_gc1 = sum(
        1 for n in slow if any(g >= 1 and s <= reads[n] and e >= writes[n] for g, s, e in gcs)
    )
    print(f"slow tokens overlapping a gen1/gen2 collection: {near_gc1}/{len(slow)}")
    ordered = sorted(numbers)
    worst_n = max(numbers, key=lambda n: total[n])
    i = ordered.index(worst_n)
    window = ordered[max(0, i - 3) : i + 3]
    for n in window:
        gap = (writes[n] - writes.get(n - 1, writes[n])) * 1000
        print(
            f"  around worst {n}: write gap {gap:.2f} ms "
            + " ".join(f"{s}={(times[s][n] - writes[n]) * 1000:.2f}" for s in order[1:])
        )
    busy = [
        (round((s - writes[worst_n]) * 1000, 2), round((e - s) * 1000, 2))
        for s, e in jobs
        if writes[worst_n] - 0.1 <= s <= reads[worst_n]
    ]
    print("  worker jobs (start rel. to its write, ms; duration ms):", busy[:20])
    print(f"slow runs (consecutive tokens ≥ p99): {runs}")
    for gen in (0, 1, 2):
        spans = [e - s for g, s, e in gcs if g == gen]
        if spans:
            print(
                f"  gen{gen}: {len(spans)} collections, p50 {percentile(spans, 0.5) * 1000:.2f} ms"
                f" max {max(spans) * 1000:.2f} ms"
            )
    worst = sorted(slow, key=lambda n: -total[n])[:3]
    for n in worst:
        overl = [
            (g, round((e - s) * 1000, 2))
            for g, s, e in gcs
            if s <= reads[n] and e >= writes[n] - 0.05
        ]
        print(f"  worst token {n}: {total[n] * 1000:.2f} ms; GC within 50 ms before/at it: {overl}")
    for n in sorted(worst):
        print(
            "  token", n, " ".join(f"{s}={(times[s][n] - writes[n]) * 1000:.2f}" for s in order[1:])
        )


async def drive(turns: int, rate: int, seconds: float) -> None:
    """Run paced turns through the instrumented server and analyse the trace."""
    from bench.lsp import Client, prepare, start, stop, turn
    from bench.paced import PacedProvider
    from relavium_lsp.server import methods
    from relavium_lsp.testing.loopback import LoopbackServer

    provider = PacedProvider()
    with tempfile.TemporaryDirectory() as scratch, LoopbackServer(responder=provider) as server:
        env, workspace = prepare(Path(scratch), server.url + "/v1")
        trace_path = Path(scratch) / "trace.json"
        env[TRACE_ENV] = str(trace_path)
        env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
        client, _ = await start([sys.executable, "-m", "bench.token_tail", "serve"], env, workspace)
        started = await client.protocol.send_request_async(
            methods.START_SESSION, {"agentRef": "bench"}
        )
        session = started["sessionId"]
        for _ in range(3):
            await turn(client, provider, session, 20, None, None)
        reads: dict[int, float] = {}
        writes: dict[int, float] = {}
        offset = 0
        load = [os.getloadavg()[0]]
        for _ in range(turns):
            reader = Reads()
            planned = await _one(client, provider, session, int(rate * seconds), rate, reader, turn)
            # Token numbers restart every turn: shift them so the whole run is one series.
            writes.update({n + offset: t for n, t in planned.writes.items()})
            reads.update({n + offset: t for n, t in reader.received.items()})
            offset += 1_000_000
        load.append(os.getloadavg()[0])
        await stop(client)
        assert isinstance(client, Client)
        trace = json.loads(trace_path.read_text("utf-8"))
    # The server's stamps restart every turn too: rebuild them per turn from the time order.
    trace["stamps"] = _shift(trace["stamps"], writes)
    print(f"{turns} turns at {rate} tok/s, load {min(load):.1f}-{max(load):.1f}")
    analyse(trace, writes, reads)


class Reads(Latencies):
    """Keeps when the client first read each token number (not a latency list)."""

    def __init__(self) -> None:
        super().__init__()
        self.received: dict[int, float] = {}

    def record(self, turn: Any, text: str, received: float) -> None:
        """Note the first read of every token in ``text``."""
        for number in token_numbers(text):
            self.received.setdefault(number, received)


async def _one(client: Any, provider: Any, session: str, tokens: int, rate: int,
               latencies: Any, turn: Any) -> Any:  # fmt: skip
    await turn(client, provider, session, tokens, rate, latencies)
    return provider.turns[-1]


def _shift(
    stamps: dict[str, list[list[float]]], writes: dict[int, float]
) -> dict[str, dict[int, float]]:
    """Map each server stamp (number restarting per turn) to the shifted number whose write
    precedes it most closely."""
    turns = sorted({n // 1_000_000 for n in writes})
    starts = [min(t for n, t in writes.items() if n // 1_000_000 == k) for k in turns]
    shifted: dict[str, dict[int, float]] = {}
    for stage, values in stamps.items():
        out: dict[int, float] = {}
        for number, at in values:
            index = max((i for i, s in enumerate(starts) if s <= at), default=None)
            if index is not None:
                out.setdefault(int(number) + turns[index] * 1_000_000, at)
        shifted[stage] = out
    return shifted


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        sys.exit(serve())
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--rate", type=int, default=1_000)
    parser.add_argument("--seconds", type=float, default=2.0)
    options = parser.parse_args()
    asyncio.run(drive(options.turns, options.rate, options.seconds))
