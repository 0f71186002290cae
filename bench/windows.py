"""Benchmark of many windows on one history: ``python -m bench.windows [--quick]``.

Two real processes share one encrypted database (``docs/design.md`` §3.1):

1. cross-process event latency — process A commits ``agent:token`` events to a session's
   durable log at 50 and 1,000 tokens/s (one commit per token, the worst case: the real bus
   batches); process B, an engine serving that session, delivers each to a subscriber. The
   row is commit-returned-in-A → listener-called-in-B, p50 and p99 (both processes read one
   clock, ``time.time()``);
2. the idle cost of watching — B's CPU time (all its threads) over a quiet stretch with 20
   watched idle sessions, as a percentage of one core.

Goals: p99 ≤ 250 ms, idle CPU ≤ 1 %.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.paced import percentile
from bench.report import Goal, Row, print_rows
from relavium_lsp.contracts.events import AgentToken, StampedEvent
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.engine.api import open_engine
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.sessions import SessionStore
from relavium_lsp.tools.host import FilesystemHost

RATES = (50, 1_000)
WATCHED_IDLE = 20
KEY_ENV = "RELAVIUM_BENCH_DB_KEY"


def write_tokens(db: Path, session_id: str, rate: int, count: int) -> None:
    """Process A: commit ``count`` token events at ``rate``/s; print ``seq time`` per commit."""
    store = SessionStore.open(db, DbKey(bytes.fromhex(os.environ[KEY_ENV]), "env"))
    try:
        start = time.perf_counter()
        lines = []
        for index in range(count):
            due = start + index / rate
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)  # pacing the writer, not synchronising anything
            (event,) = store.append_events(session_id, [AgentToken(token="x", model="bench")])
            lines.append(f"{event.sequence_number} {time.time():.6f}")
    finally:
        store.close()
    print("\n".join(lines), flush=True)


async def _latencies(
    db: Path,
    key_hex: str,
    session_id: str,
    arrivals: tuple[dict[int, float], asyncio.Event],
    rate: int,
    count: int,
) -> list[float]:
    """Run process A at ``rate`` and pair its commit times with B's arrivals (ms)."""
    writer = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.windows",
        "--write",
        str(db),
        session_id,
        str(rate),
        str(count),
        env={**os.environ, KEY_ENV: key_hex},
        stdout=subprocess.PIPE,
    )
    output, _ = await writer.communicate()
    committed = {
        int(seq): float(at) for seq, at in (line.split() for line in output.decode().splitlines())
    }
    arrived, landed = arrivals
    deadline = time.monotonic() + 30
    while not committed.keys() <= arrived.keys():
        landed.clear()
        try:
            await asyncio.wait_for(landed.wait(), max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            break  # reported as events that never arrived
    return [(arrived[seq] - at) * 1000 for seq, at in committed.items() if seq in arrived]


async def measure(quick: bool) -> list[Row]:
    """Both rows of the module doc."""
    with tempfile.TemporaryDirectory(prefix="relavium-bench-windows-") as scratch:
        root = Path(scratch)
        os.environ["RELAVIUM_HOME"] = str(root / "home")
        workspace = root / "ws"
        workspace.mkdir()
        db = root / "home" / "history.db"
        key = os.urandom(32)
        engine = await open_engine(FilesystemHost(), history_path=db, db_key=DbKey(key, "env"))
        rows: list[Row] = []
        try:
            context = SessionContext(working_dir=str(workspace))
            sessions = [
                (await engine.start(context=context)).record.id for _ in range(WATCHED_IDLE)
            ]
            arrived: dict[int, float] = {}
            landed = asyncio.Event()
            streamed = sessions[0]

            def listen(event: StampedEvent) -> None:
                if event.session_id == streamed and isinstance(event.payload, AgentToken):
                    arrived[event.sequence_number] = time.time()
                    landed.set()

            await engine.subscribe(listen)
            for rate in RATES:
                count = (100 if quick else 250) if rate <= 50 else (1_000 if quick else 3_000)
                samples = await _latencies(db, key.hex(), streamed, (arrived, landed), rate, count)
                missing = count - len(samples)
                note = f"{len(samples)} events" + (f", {missing} never arrived" if missing else "")
                for name, fraction in (("p50", 0.5), ("p99", 0.99)):
                    rows.append(
                        Row(
                            measure=f"cross-process event latency {name}, {rate:,} tok/s",
                            value=percentile(samples, fraction) if samples else float("nan"),
                            unit="ms",
                            goal=Goal(limit=250, on="value") if name == "p99" else None,
                            note=note,
                        )
                    )
            rows.append(await _idle_cpu(quick))
        finally:
            await engine.close()
        return rows


async def _idle_cpu(quick: bool) -> Row:
    # Let the last stream's reads finish, then measure a quiet stretch.
    await asyncio.sleep(0.5)
    span = 3.0 if quick else 10.0
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.sleep(span)
    used = (time.process_time() - cpu) / (time.perf_counter() - wall) * 100
    return Row(
        measure=f"idle CPU watching {WATCHED_IDLE} sessions",
        value=used,
        unit="%",
        goal=Goal(limit=1.0, on="value"),
        note=f"{span:g} s quiet, polling every interval",
    )


def rows(quick: bool) -> list[Row]:
    """The rows for ``python -m bench``."""
    return asyncio.run(measure(quick))


def main() -> None:
    """``python -m bench.windows [--quick]`` (``--write`` is process A, internal)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write", nargs=4, metavar=("DB", "SESSION", "RATE", "COUNT"))
    arguments = parser.parse_args()
    if arguments.write:
        db, session_id, rate, count = arguments.write
        write_tokens(Path(db), session_id, int(rate), int(count))
        return
    print_rows(rows(arguments.quick))


if __name__ == "__main__":
    main()
