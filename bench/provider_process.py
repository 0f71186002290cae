"""The paced loopback provider in a process of its own: ``python -m bench.provider_process``.

A real model provider is another machine; the benchmark's editor (the LSP client) is another
program. Run in the client's process, the provider's thread shares that process's GIL with the
client reading the server's notifications, so the moment the request "arrived" also holds the
client's own work (issue 25: the per-turn row). Here the provider has a process to itself.

Protocol, one line each: the first line out is the base URL. Each line in is a plan
(``<tokens> <rate>``, rate ``-`` for as fast as possible) for the next request, answered with
``planned`` once it is queued (so the request can never overtake it). For each request, one
line out: the ``time.perf_counter()`` at which it arrived — ``CLOCK_MONOTONIC`` on
Linux, comparable with the parent's own readings (:mod:`bench.paced`).
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass

from bench.paced import PacedProvider
from relavium_lsp.testing.loopback import LoopbackServer, ReceivedRequest, ScriptedResponse


@dataclass
class _Reporting:
    provider: PacedProvider

    def __call__(self, request: ReceivedRequest) -> ScriptedResponse:
        response = self.provider(request)
        print(f"{self.provider.turns[-1].arrived!r}", flush=True)
        return response


def serve() -> None:
    """Serve until stdin closes."""
    provider = PacedProvider()
    with LoopbackServer(responder=_Reporting(provider)) as server:
        print(server.url, flush=True)
        for line in sys.stdin:
            tokens, rate = line.split()
            provider.plan(int(tokens), None if rate == "-" else float(rate))
            print("planned", flush=True)


class ProviderProcess:
    """The parent's handle: plan a response, then read when its request arrived."""

    def __init__(self, process: asyncio.subprocess.Process, url: str) -> None:
        self._process = process
        self.url = url

    @classmethod
    async def start(cls) -> ProviderProcess:
        """Spawn it and read its URL."""
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.provider_process",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert process.stdout is not None
        url = (await process.stdout.readline()).decode().strip()
        return cls(process, url)

    async def plan(self, tokens: int, rate: float | None) -> None:
        """The next request gets ``tokens`` deltas at ``rate``."""
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        self._process.stdin.write(f"{tokens} {'-' if rate is None else rate}\n".encode())
        await self._process.stdin.drain()
        assert (await self._process.stdout.readline()) == b"planned\n"

    async def arrived(self) -> float:
        """When the next request arrived (the provider's ``perf_counter``)."""
        assert self._process.stdout is not None
        return float((await self._process.stdout.readline()).decode())

    async def stop(self) -> None:
        """Close its stdin and wait for it."""
        assert self._process.stdin is not None
        self._process.stdin.close()
        await self._process.wait()


if __name__ == "__main__":
    serve()
