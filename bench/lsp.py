"""Benchmark of the language server: ``python -m bench.lsp [--tokens N]``.

Prints numbers and ratios (never pass/fail), all against real server processes:

1. cold start: spawning ``relavium-lsp serve`` → the ``initialize`` result (p50 of 5);
2. end-to-end token throughput: a loopback provider streams N tokens with no delay; the
   client counts token characters arriving in ``relavium/sessionEvent`` notifications — as a
   ratio to a tiny pygls server that does nothing but send notifications (the floor any
   pygls server can reach), per token and per notification;
3. server RSS idle (engine open, no session) and with 100 open sessions.
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

from relavium_lsp.server import methods
from relavium_lsp.server.core import relavium_converter
from relavium_lsp.testing.loopback import LoopbackServer, ReceivedRequest, ScriptedResponse
from relavium_lsp.testing.wire_scripts import openai_stream

SERVE = [sys.executable, "-m", "relavium_lsp", "serve"]
FLOOD = [sys.executable, "-m", "bench.notification_flood_server"]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Client(BaseLanguageClient):
    """A minimal editor: counts streamed token characters."""

    def __init__(self) -> None:
        super().__init__("bench", "1", converter_factory=relavium_converter)
        self.token_chars = 0
        self.notifications = 0
        self.turn_done = asyncio.Event()

        @self.feature(methods.SESSION_EVENT)
        def on_event(params: dict[str, Any]) -> None:
            if params["type"] == "agent:token":
                self.token_chars += len(params["token"])
                self.notifications += 1
            elif params["type"] == "session:turn_completed":
                self.turn_done.set()

        @self.feature("bench/note")
        def on_note(params: dict[str, Any]) -> None:
            self.notifications += 1


async def start(command: list[str], env: dict[str, str], workspace: Path) -> tuple[Client, float]:
    client = Client()
    began = time.perf_counter()
    await client.start_io(*command, env=env)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        )
    )
    elapsed = time.perf_counter() - began
    client.initialized(types.InitializedParams())
    return client, elapsed


async def stop(client: Client) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def prepare(root: Path, base_url: str) -> tuple[dict[str, str], Path]:
    home, workspace = root / "home", root / "ws"
    (home / ".relavium").mkdir(parents=True)
    (home / ".relavium" / "config.toml").write_text(
        f'[providers.loop]\nkind = "openai"\nbase_url = "{base_url}"\n'
        "allow_local_endpoint = true\n",
        encoding="utf-8",
    )
    agents = workspace / ".relavium" / "agents"
    agents.mkdir(parents=True)
    (agents / "bench.agent.yaml").write_text(
        "id: bench\nname: Bench\nmodel: gpt-4o-mini\nprovider: loop\n", encoding="utf-8"
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "RELAVIUM_HOME": str(home / ".relavium")}
    return env, workspace


async def run(tokens: int) -> None:
    pieces = [f"t{n} " for n in range(tokens)]
    token_text_chars = sum(map(len, pieces))

    def respond(request: ReceivedRequest) -> ScriptedResponse:
        return openai_stream(text=pieces, usage=(10, tokens))

    with tempfile.TemporaryDirectory() as scratch, LoopbackServer(responder=respond) as server:
        env, workspace = prepare(Path(scratch), server.url + "/v1")

        starts = []
        for _ in range(5):
            client, elapsed = await start(SERVE, env, workspace)
            starts.append(elapsed)
            await stop(client)

        client, _ = await start(SERVE, env, workspace)
        pid = client._server.pid  # type: ignore[union-attr]
        await client.protocol.send_request_async(methods.LIST_SESSIONS, {})
        idle_rss = rss_mb(pid)
        started = await client.protocol.send_request_async(
            methods.START_SESSION, {"agentRef": "bench"}
        )
        session_id = started["sessionId"]
        rates = []
        notes = []
        for turn in range(3):
            client.token_chars = client.notifications = 0
            client.turn_done.clear()
            began = time.perf_counter()
            await client.protocol.send_request_async(
                methods.SEND_MESSAGE, {"sessionId": session_id, "text": f"stream {turn}"}
            )
            await client.turn_done.wait()
            elapsed = time.perf_counter() - began
            assert client.token_chars == token_text_chars, (client.token_chars, token_text_chars)
            rates.append(tokens / elapsed)
            notes.append(client.notifications)
        for _ in range(100):
            await client.protocol.send_request_async(methods.START_SESSION, {"agentRef": "bench"})
        busy_rss = rss_mb(pid)
        await stop(client)

        flood, _ = await start(FLOOD, dict(os.environ), workspace)
        flood_rates = []
        for _ in range(3):
            flood.notifications = 0
            began = time.perf_counter()
            await flood.protocol.send_request_async("bench/flood", {"count": tokens, "size": 6})
            elapsed = time.perf_counter() - began
            flood_rates.append(flood.notifications / elapsed)
        await stop(flood)

    rate, floor = statistics.median(rates), statistics.median(flood_rates)
    print(f"lsp benchmark: {tokens:,} tokens per turn from a loopback provider")
    print(
        f"  cold start to initialize result: p50 {statistics.median(starts) * 1000:.0f} ms "
        f"(min {min(starts) * 1000:.0f}, max {max(starts) * 1000:.0f})"
    )
    print(
        f"  end-to-end: {rate:,.0f} tokens/s in {statistics.median(notes):,.0f} notifications "
        "(deltas coalesced while the durable log write is in flight)"
    )
    print(f"  raw pygls floor: {floor:,.0f} notifications/s (one token each)")
    print(f"  ratio tokens/s to the floor: {rate / floor:.2f}")
    print(f"  server RSS: idle {idle_rss:.0f} MB, with 101 sessions {busy_rss:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tokens", type=int, default=10_000)
    arguments = parser.parse_args()
    asyncio.run(run(arguments.tokens))


if __name__ == "__main__":
    main()
