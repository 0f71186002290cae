"""Benchmark of the language server, over real server processes: ``python -m bench.lsp``.

Each measure has its anchor measured in the same run against a bare pygls server
(:mod:`bench.baseline_server`):

1. cold start: spawn ``relavium-lsp serve`` → its ``initialize`` result (p50), against the
   bare pygls server; after one unmeasured start of each, the two are started in back-to-back
   pairs, the one going first alternating (the notes give the spread per start and the ratio
   within each pair);
2. per-token latency at realistic rates: the loopback provider (:mod:`bench.paced`) writes a
   delta at 50, 200 and 1,000 tokens/s → the client reads the notification carrying it (p99
   and p50 over every token), against the bare server relaying the same paced stream — both
   servers up at once, read by the same client class, in interleaved rounds (the machine's
   load at each round is in the note, and the per-round spread of each quantile).

   The goal (issue 25) is on what the *server adds*: "server-added latency per token, p99
   ≤ 1 ms". The absolute p99 also holds what no server can avoid — the provider's socket,
   a pygls write to stdout, the client's read, two processes' scheduling on a shared
   machine — and the bare relay pays exactly that, in the same rounds. So the goal row per
   rate is *our p99 minus the relay's p99* in the same round, its median over the
   interleaved rounds (with the per-round spread and the difference of the p99s pooled over
   every round in its note: one round a machine stall hit moves the pooled p99s and that
   round, not the median; a server cause in most rounds moves the median), and the absolute
   p99 and p50 rows are
   context: their value, the relay's as the anchor, the ratio, no goal. A limit on the
   absolute p99 would pass or miss with the machine's load rather than with our code, and a
   ratio limit would be an invented target (the relay's p99 is a fraction of a
   millisecond, so small absolute changes swing it). The difference of two p99s is not the
   p99 of per-token differences (tokens are not paired across servers); it says how much
   later our slowest percent arrives than the relay's, which is what a user would notice.
3. per-turn overhead: ``relavium/sendMessage`` sent → the provider receives the HTTP request
   (p99 over every turn; the client advertises work-done progress, as VS Code does). The
   provider answering these turns runs in a process of its own (:mod:`bench.provider_process`):
   a real provider is another machine, and a provider thread in the client's process would
   wait for the GIL while the client reads the server's notifications;
4. end-to-end throughput of an unpaced 10,000-token turn, against the bare server sending
   notifications as fast as pygls can;
5. server RSS idle (engine open, no session) and with 100 open sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import BaseLanguageClient

from bench.paced import PER_TURN_GOAL_MS, Latencies, PacedProvider, Turn, percentile
from bench.provider_process import ProviderProcess
from bench.report import Goal, Row, print_rows
from relavium_lsp.server import methods
from relavium_lsp.server.core import relavium_converter
from relavium_lsp.testing.loopback import LoopbackServer

SERVE = [sys.executable, "-m", "relavium_lsp", "serve"]
BASELINE = [sys.executable, "-m", "bench.baseline_server"]
RATES = (50, 200, 1_000)


def rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Client(BaseLanguageClient):
    """A minimal editor: times every streamed token against the provider's write."""

    def __init__(self) -> None:
        super().__init__("bench", "1", converter_factory=relavium_converter)
        self.token_chars = 0
        self.notifications = 0
        self.turn_done = asyncio.Event()
        self.turn: Turn | None = None
        self.latencies: Latencies | None = None

        @self.feature(methods.SESSION_EVENT)
        def on_event(params: dict[str, Any]) -> None:
            received = time.perf_counter()
            if params["type"] == "agent:token":
                self.token_chars += len(params["token"])
                self.notifications += 1
                if self.turn is not None and self.latencies is not None:
                    self.latencies.record(self.turn, params["token"], received)
            elif params["type"] == "session:turn_completed":
                self.turn_done.set()

        @self.feature("bench/note")
        def on_note(params: dict[str, Any]) -> None:
            self.notifications += 1

        @self.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def on_progress_create(params: Any) -> None:
            return None

        @self.feature(types.PROGRESS)
        def on_progress(params: Any) -> None:
            return None

        # Heard like any editor would (pygls logs a warning for each unhandled one).
        @self.feature(methods.SESSIONS_CHANGED)
        def on_sessions_changed(params: Any) -> None:
            return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def start(
    command: list[str], env: dict[str, str], workspace: Path, cpu: list[float] | None = None
) -> tuple[Client, float]:
    """Spawn a server, initialize it; the client and seconds to the ``initialize`` result.

    With ``cpu``, the server's CPU seconds at that moment (before ``initialized``, which
    starts the work deferred past ``initialize``) are appended to it.
    """
    client = Client()
    began = time.perf_counter()
    await client.start_io(*command, env=env)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True)
            ),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        )
    )
    elapsed = time.perf_counter() - began
    if cpu is not None:
        cpu.append(cpu_seconds(client._server.pid))  # type: ignore[union-attr]
    client.initialized(types.InitializedParams())
    return client, elapsed


async def stop(client: Client) -> None:
    """Shut a server down politely."""
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def prepare(
    root: Path, base_url: str, remote_url: str | None = None
) -> tuple[dict[str, str], Path]:
    """A home with a loopback provider, a workspace with an agent that uses it.

    With ``remote_url``, a second provider (:mod:`bench.provider_process`) and its agent,
    ``bench-remote``.
    """
    home, workspace = root / "home", root / "ws"
    (home / ".relavium").mkdir(parents=True)
    providers = f'[providers.loop]\nkind = "openai"\nbase_url = "{base_url}"\n'
    providers += "allow_local_endpoint = true\n"
    if remote_url is not None:
        providers += f'\n[providers.remote]\nkind = "openai"\nbase_url = "{remote_url}"\n'
        providers += "allow_local_endpoint = true\n"
    (home / ".relavium" / "config.toml").write_text(
        # One session runs every measured turn: lift the default 50-turn limit. No automatic
        # introspection: its model calls would take the paced answers planned for turns.
        f"[chat]\nmax_turns = 1000\n\n{providers}\n[introspection]\nenabled = false\n",
        encoding="utf-8",
    )
    agents = workspace / ".relavium" / "agents"
    agents.mkdir(parents=True)
    (agents / "bench.agent.yaml").write_text(
        "id: bench\nname: Bench\nmodel: gpt-4o-mini\nprovider: loop\n", encoding="utf-8"
    )
    if remote_url is not None:
        (agents / "bench-remote.agent.yaml").write_text(
            "id: bench-remote\nname: Bench\nmodel: gpt-4o-mini\nprovider: remote\n",
            encoding="utf-8",
        )
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "RELAVIUM_HOME": str(home / ".relavium")}
    return env, workspace


async def cold_starts(
    count: int, env: dict[str, str], workspace: Path
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and CPU seconds to the ``initialize`` result, relavium and bare pygls interleaved.

    One unmeasured start of each first, so both find the interpreter, pygls and lsprotocol
    in the OS page cache. Then ``count`` pairs,
    the one going first alternating, so load that comes and goes falls on both alike; pair
    ``i`` of each list ran back to back.
    """
    starts: dict[str, list[float]] = {"relavium": [], "pygls": []}
    cpu: dict[str, list[float]] = {"relavium": [], "pygls": []}
    commands = {"relavium": SERVE, "pygls": BASELINE}
    for name in commands:
        client, _ = await start(commands[name], env, workspace)
        await stop(client)
    for attempt in range(count):
        order = ["relavium", "pygls"] if attempt % 2 else ["pygls", "relavium"]
        for name in order:
            client, elapsed = await start(commands[name], env, workspace, cpu[name])
            starts[name].append(elapsed)
            await stop(client)
    return starts, cpu


def cold_start_rows(
    starts: dict[str, list[float]], cpu: dict[str, list[float]], loads: list[float]
) -> list[Row]:
    """The goal row (p50 of ours against p50 of bare pygls, ≤ 1.1x) and the CPU context row.

    Both notes give the per-start spread and the ratio within each back-to-back pair (its
    range and median), so a reader can see how much of a verdict is the machine.
    """
    ours, bare = starts["relavium"], starts["pygls"]
    pairs = [mine / theirs for mine, theirs in zip(ours, bare, strict=True) if theirs > 0]
    cpu_pairs = [
        mine / theirs for mine, theirs in zip(cpu["relavium"], cpu["pygls"], strict=True) if theirs
    ]
    load = f"load {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs"

    def ms_range(values: list[float]) -> str:
        return f"{min(values) * 1000:,.0f}-{max(values) * 1000:,.0f} ms" if values else "n/a"

    def ratio_range(values: list[float]) -> str:
        if not values:
            return "n/a"
        return f"{min(values):.2f}-{max(values):.2f}x (median {statistics.median(values):.2f}x)"

    return [
        Row(
            "cold start → initialize result, p50",
            statistics.median(ours) * 1000,
            "ms",
            anchor="bare pygls server",
            anchor_value=statistics.median(bare) * 1000,
            goal=Goal(1.1),
            note=(
                f"{len(ours)} starts each, interleaved in pairs (which goes first alternates),"
                f" after one unmeasured start each ({load}); per start ours {ms_range(ours)},"
                f" bare {ms_range(bare)}; ratio within a pair {ratio_range(pairs)}"
            ),
        ),
        Row(
            "cold start: server CPU to initialize result, p50",
            statistics.median(cpu["relavium"]) * 1000,
            "ms",
            anchor="bare pygls server",
            anchor_value=statistics.median(cpu["pygls"]) * 1000,
            note=(
                "user+system CPU of the server process (10 ms ticks); steadier than wall time"
                f" on a busy machine; ratio within a pair {ratio_range(cpu_pairs)}"
            ),
        ),
    ]


async def turn(client: Client, provider: PacedProvider, session_id: str, tokens: int,
               rate: float | None, latencies: Latencies | None) -> tuple[float, float]:  # fmt: skip
    """One turn through the server; (send → provider request, send → turn completed)."""
    client.turn = provider.plan(tokens, rate)
    client.latencies = latencies
    client.token_chars = client.notifications = 0
    client.turn_done.clear()
    began = time.perf_counter()
    result = await client.protocol.send_request_async(
        methods.SEND_MESSAGE, {"sessionId": session_id, "text": "stream please"}
    )
    assert result["stopReason"] == "stop", result  # a failed turn would skew every row
    await client.turn_done.wait()
    return client.turn.arrived - began, time.perf_counter() - began


async def remote_turn(client: Client, provider: ProviderProcess, session_id: str) -> float:
    """One 20-token turn answered by the provider process; send → its request arrived."""
    await provider.plan(20, None)
    client.turn, client.latencies = None, None
    client.turn_done.clear()
    began = time.perf_counter()
    result = await client.protocol.send_request_async(
        methods.SEND_MESSAGE, {"sessionId": session_id, "text": "stream please"}
    )
    assert result["stopReason"] == "stop", result  # a failed turn would skew every row
    arrived = await provider.arrived()
    await client.turn_done.wait()
    return arrived - began


async def relayed(client: Client, provider: PacedProvider, url: str, tokens: int,
                  rate: float, latencies: Latencies) -> None:  # fmt: skip
    """The same paced stream through the bare pygls relay."""
    client.turn = provider.plan(tokens, rate)
    client.latencies = latencies
    await client.protocol.send_request_async("bench/relay", {"url": url})


async def paced_rounds(
    ours: Client, session_id: str, relay: Client, provider: PacedProvider, url: str,
    rounds: int, seconds: float,
) -> tuple[dict[int, list[Latencies]], dict[int, list[Latencies]], list[float]]:  # fmt: skip
    """Paced streams through our server and through the bare relay, interleaved.

    Both servers are up at once and read by the same client class; each round streams every
    rate through both, the one going first alternating, so machine load that comes and goes
    (this machine is shared) falls on both alike. Per round and rate, one :class:`Latencies`
    each; also the 1-minute load average before each round.
    """
    mine: dict[int, list[Latencies]] = {rate: [] for rate in RATES}
    floor: dict[int, list[Latencies]] = {rate: [] for rate in RATES}
    loads = []
    for number in range(rounds):
        loads.append(os.getloadavg()[0])
        for rate in RATES:
            tokens = max(1, int(rate * seconds))
            ours_first = (number + RATES.index(rate)) % 2 == 0
            for which in ("ours", "relay") if ours_first else ("relay", "ours"):
                if which == "ours":
                    mine[rate].append(Latencies())
                    await turn(ours, provider, session_id, tokens, rate, mine[rate][-1])
                else:
                    floor[rate].append(Latencies())
                    await relayed(relay, provider, url, tokens, rate, floor[rate][-1])
    loads.append(os.getloadavg()[0])
    return mine, floor, loads


def merged(runs: list[Latencies]) -> Latencies:
    """Every token of several runs as one sample."""
    return Latencies([value for run in runs for value in run.values])


def spread(runs: list[Latencies], fraction: float) -> str:
    """``lo-hi`` of one quantile across rounds (ms)."""
    values = [run.p(fraction) for run in runs if run.values]
    return f"{min(values):.2f}-{max(values):.2f}" if values else "n/a"


def added_per_round(mine: list[Latencies], floor: list[Latencies], fraction: float) -> list[float]:
    """Per round: our quantile minus the relay's in the same round (ms)."""
    return [
        ours.p(fraction) - relay.p(fraction)
        for ours, relay in zip(mine, floor, strict=True)
        if ours.values and relay.values
    ]


def added_spread(mine: list[Latencies], floor: list[Latencies], fraction: float) -> str:
    """``lo-hi`` across rounds of our quantile minus the relay's in the same round (ms)."""
    values = added_per_round(mine, floor, fraction)
    return f"{min(values):+.2f} to {max(values):+.2f}" if values else "n/a"


def token_rows(
    mine: dict[int, list[Latencies]], floor: dict[int, list[Latencies]], loads: list[float]
) -> list[Row]:
    """Per rate: our p99 and p50 against the relay's (context) and the p99 the server adds
    (the goal: ≤ 1 ms; see the module docstring).

    The goal row's value is the *median over rounds* of (our p99 - the relay's p99 in the
    same round). One round that a machine stall hit (a shared 2-core machine pauses either
    process now and then for several ms, delaying every token queued behind the pause) moves
    that round's difference, not the median; a cause in the server that shows in most rounds
    moves the median. The pooled difference (every token of every round) is in the note.
    """
    rows = []
    load = f"load {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs"
    for rate in RATES:
        ours, relay = merged(mine[rate]), merged(floor[rate])
        rounds = len(mine[rate])
        added = added_per_round(mine[rate], floor[rate], 0.99)
        rows.append(
            Row(
                f"per-token latency at {rate:,} tok/s (provider write → client read), p99",
                ours.p(0.99),
                "ms",
                anchor="bare pygls relay",
                anchor_value=relay.p(0.99),
                note=(
                    f"{len(ours.values):,} tokens in {rounds} rounds interleaved with the relay"
                    f" ({load}); p99 per round {spread(mine[rate], 0.99)} ms"
                    f" (relay {spread(floor[rate], 0.99)} ms)"
                ),
            )
        )
        rows.append(
            Row(
                f"server-added per-token latency at {rate:,} tok/s, p99 "
                "(ours p99 - relay p99, same rounds)",
                statistics.median(added) if added else float("nan"),
                "ms",
                goal=Goal(1.0, on="value"),
                note=(
                    f"median over {rounds} interleaved rounds of (our p99 - the relay's p99 in"
                    f" that round); per round {added_spread(mine[rate], floor[rate], 0.99)} ms;"
                    f" pooled over every token {ours.p(0.99):.2f} ms - {relay.p(0.99):.2f} ms"
                    f" = {ours.p(0.99) - relay.p(0.99):+.2f} ms"
                ),
            )
        )
        rows.append(
            Row(
                f"per-token latency at {rate:,} tok/s, p50",
                ours.p(0.5),
                "ms",
                anchor="bare pygls relay",
                anchor_value=relay.p(0.5),
                note=(
                    f"server-added at the median: {ours.p(0.5) - relay.p(0.5):+.3f} ms; "
                    f"p50 per round {spread(mine[rate], 0.5)} ms "
                    f"(relay {spread(floor[rate], 0.5)} ms)"
                ),
            )
        )
    return rows


async def run(quick: bool) -> list[Row]:
    """Every measure; the rows."""
    provider = PacedProvider()
    rounds, seconds_per_round = (3, 1.5) if quick else (5, 2.5)
    burst = 3_000 if quick else 10_000
    remote = await ProviderProcess.start()
    with tempfile.TemporaryDirectory() as scratch, LoopbackServer(responder=provider) as server:
        url = server.url + "/v1"
        env, workspace = prepare(Path(scratch), url, remote.url + "/v1")
        start_loads = [os.getloadavg()[0]]
        starts, cpu = await cold_starts(9 if quick else 21, env, workspace)
        start_loads.append(os.getloadavg()[0])

        client, _ = await start(SERVE, env, workspace)
        pid = client._server.pid  # type: ignore[union-attr]
        await client.protocol.send_request_async(methods.LIST_SESSIONS, {})
        idle_rss = rss_mb(pid)
        started = await client.protocol.send_request_async(
            methods.START_SESSION, {"agentRef": "bench"}
        )
        session_id = started["sessionId"]
        remote_session = await client.protocol.send_request_async(
            methods.START_SESSION, {"agentRef": "bench-remote"}
        )
        overheads = [
            await remote_turn(client, remote, remote_session["sessionId"])
            for _ in range(15 if quick else 60)
        ]
        await remote.stop()
        baseline, _ = await start(BASELINE, dict(os.environ), workspace)
        # One unmeasured relay so its first HTTP connection is not in the first round.
        await relayed(baseline, provider, url, 5, 1_000, Latencies())
        mine, floor, loads = await paced_rounds(
            client, session_id, baseline, provider, url, rounds, seconds_per_round
        )
        rates = []
        notes = []
        for _ in range(3):
            _, elapsed = await turn(client, provider, session_id, burst, None, None)
            rates.append(burst / elapsed)
            notes.append(client.notifications)
        for _ in range(100):
            await client.protocol.send_request_async(methods.START_SESSION, {"agentRef": "bench"})
        busy_rss = rss_mb(pid)
        await stop(client)

        flood_rates = []
        for _ in range(3):
            baseline.notifications = 0
            began = time.perf_counter()
            await baseline.protocol.send_request_async("bench/flood", {"count": burst, "size": 6})
            flood_rates.append(baseline.notifications / (time.perf_counter() - began))
        await stop(baseline)

    rows = [
        *cold_start_rows(starts, cpu, start_loads),
        Row(
            "per-turn overhead (sendMessage → provider request), p99",
            percentile(overheads[1:], 0.99) * 1000,
            "ms",
            anchor="its p50",
            anchor_value=statistics.median(overheads[1:]) * 1000,
            goal=Goal(PER_TURN_GOAL_MS, on="value", strict=True),
            note=f"{len(overheads) - 1} turns after the first; work-done progress on; the "
            "provider in a process of its own (bench.provider_process), as a real one is remote",
        ),
        Row(
            "per-turn overhead, the first turn after start",
            overheads[0] * 1000,
            "ms",
            note="one-time: the engine's first HTTP connection, statements, lazily loaded code",
        ),
        *token_rows(mine, floor, loads),
        Row(
            f"end-to-end throughput, unpaced {burst:,}-token turn",
            statistics.median(rates),
            "tok/s",
            anchor="bare pygls notifications/s",
            anchor_value=statistics.median(flood_rates),
            note=f"{statistics.median(notes):,.0f} notifications (deltas coalesce under load)",
        ),
        Row("server RSS, idle", idle_rss, "MB"),
        Row("server RSS, 101 open sessions", busy_rss, "MB", anchor="idle", anchor_value=idle_rss),
    ]
    return rows


def rows(quick: bool) -> list[Row]:
    """The LSP rows (``quick``: fewer starts and turns, shorter paced streams)."""
    return asyncio.run(run(quick))


def main() -> None:
    """Run the benchmark and print its rows."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    print_rows(rows(parser.parse_args().quick))


if __name__ == "__main__":
    main()
