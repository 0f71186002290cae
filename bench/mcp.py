"""What the MCP pipeline adds to a tool call, over the raw SDK call (target: <= 2 ms p50).

Run: ``python -m bench.mcp`` (``--quick`` for fewer calls). Prints numbers; never pass/fail.

One probe server (``tests/mcp_servers/probe_server.py``, stdio) is started twice: once for a
bare ``mcp.Client`` and once through our pool. Measured per call of its ``echo`` tool:

- raw SDK: ``Client.call_tool`` — the anchor;
- pipeline: ``ToolRegistry.dispatch`` of ``mcp__probe__echo`` — sanitized ``agent:tool_call``,
  JSON-Schema validation, the approval gate (auto: a readOnlyHint tool the user allowed),
  the pool's deadline and crash handling, result conversion, bounding, ``agent:tool_result``;
- overhead: for each pipeline call, its time minus the time of the SDK call inside it (the
  pool's connection is wrapped to time it), so server-side jitter cancels out of the pair.

``rows(quick)`` returns the numbers as :class:`bench.report.Row` for ``make bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from relavium_lsp.config.mcp_servers import ServerDefinition
from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.content import ToolCallPart
from relavium_lsp.contracts.mcp import McpServerConfig
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.mcp.connection import McpConnection
from relavium_lsp.mcp.pool import McpServerPool
from relavium_lsp.mcp.source import McpToolSource
from relavium_lsp.mcp.trust import TrustStore
from relavium_lsp.tools.base import ToolCallContext
from relavium_lsp.tools.host import FilesystemHost
from relavium_lsp.tools.registry import default_registry

PROBE = Path(__file__).resolve().parents[1] / "tests" / "mcp_servers" / "probe_server.py"
GOAL_MS = 2.0
ARGS = {"text": "hello from the benchmark"}


@dataclass(frozen=True)
class McpOverhead:
    """p50 / p99 in milliseconds."""

    raw_p50: float
    raw_p99: float
    pipeline_p50: float
    pipeline_p99: float
    overhead_p50: float
    overhead_p99: float
    calls: int


class _Artifacts:
    async def save_artifact(self, session_id: str, call_id: str, text: str) -> str:
        return "unused"

    async def load_artifact(self, session_id: str, artifact_id: str) -> str | None:
        return None


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    if q == 0.5:
        return statistics.median(ordered)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


async def _raw_samples(calls: int) -> list[float]:
    params = StdioServerParameters(command=sys.executable, args=[str(PROBE)])
    with open("/dev/null", "w", encoding="utf-8") as quiet:  # noqa: ASYNC230
        async with Client(stdio_client(params, errlog=quiet), cache=None) as client:
            samples = []
            for index in range(calls + calls // 10):
                start = time.perf_counter()
                await client.call_tool("echo", ARGS)
                if index >= calls // 10:  # the first tenth warms up
                    samples.append((time.perf_counter() - start) * 1000)
    return samples


async def _pipeline_samples(calls: int, workspace: Path) -> tuple[list[float], list[float]]:
    definition = ServerDefinition(
        name="probe",
        origin="user",
        config=McpServerConfig(
            command=sys.executable, args=[str(PROBE)], auto_approve_read_only=True
        ),
    )
    source = McpToolSource(
        McpServerPool(),
        TrustStore(workspace / "home"),
        load_servers=lambda _: {"probe": definition},
    )
    registry = default_registry(sources=[source])
    events: list[object] = []
    host = FilesystemHost()
    ctx = ToolCallContext(
        session_id="bench",
        context=SessionContext(working_dir=str(workspace)),
        policy=EffectiveChatPolicy(),
        host=host,
        emit=events.append,
        ask_user=host.request_approval,
        artifacts=_Artifacts(),
        model="bench-model",
        allowed_tools=frozenset(),
        temp_dir=workspace,
    )
    sdk_ms: list[float] = []
    original = McpConnection.call_tool

    async def timed(self: McpConnection, name: str, arguments: Any) -> Any:
        start = time.perf_counter()
        try:
            return await original(self, name, arguments)
        finally:
            sdk_ms.append((time.perf_counter() - start) * 1000)

    McpConnection.call_tool = timed  # type: ignore[method-assign]
    try:
        selection = await registry.select(["mcp:probe"], ctx)
        ctx.allowed_tools, ctx.turn_tools = selection.allowed, selection.turn_tools
        ids = itertools.count()
        totals: list[float] = []
        for index in range(calls + calls // 10):
            events.clear()
            call = ToolCallPart(id=f"c{next(ids)}", name="mcp__probe__echo", args=ARGS)
            start = time.perf_counter()
            answer = await registry.dispatch(call, ctx)
            elapsed = (time.perf_counter() - start) * 1000
            assert not answer.result.is_error, answer.result.result
            if index >= calls // 10:
                totals.append(elapsed)
        inner = sdk_ms[-len(totals) :]
    finally:
        McpConnection.call_tool = original  # type: ignore[method-assign]
        await source.close()
    return totals, [total - sdk for total, sdk in zip(totals, inner, strict=True)]


async def measure(calls: int) -> McpOverhead:
    """Run both sides against fresh probe servers."""
    with tempfile.TemporaryDirectory() as scratch:
        raw = await _raw_samples(calls)
        pipeline, overhead = await _pipeline_samples(calls, Path(scratch))
    return McpOverhead(
        raw_p50=_p(raw, 0.5),
        raw_p99=_p(raw, 0.99),
        pipeline_p50=_p(pipeline, 0.5),
        pipeline_p99=_p(pipeline, 0.99),
        overhead_p50=_p(overhead, 0.5),
        overhead_p99=_p(overhead, 0.99),
        calls=calls,
    )


def rows(quick: bool = False) -> list[Any]:
    """The numbers as ``bench.report.Row`` (for ``make bench``)."""
    from bench.report import Goal, Row

    result = asyncio.run(measure(100 if quick else 1_000))
    return [
        Row(
            measure="MCP tool call through the pipeline, p50",
            value=result.pipeline_p50,
            unit="ms",
            anchor="raw SDK call_tool",
            anchor_value=result.raw_p50,
        ),
        Row(
            measure="MCP pipeline overhead per call (minus the SDK call), p50",
            value=result.overhead_p50,
            unit="ms",
            goal=Goal(limit=GOAL_MS, on="value"),
            note=f"p99 {result.overhead_p99:.2f} ms over {result.calls} calls",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    result = asyncio.run(measure(100 if options.quick else 1_000))
    print(f"MCP tool call, echo over stdio ({result.calls:,} calls each)")
    lines = (
        ("raw SDK call_tool", result.raw_p50, result.raw_p99),
        ("through the pipeline", result.pipeline_p50, result.pipeline_p99),
        ("overhead (pipeline - SDK)", result.overhead_p50, result.overhead_p99),
    )
    for label, p50, p99 in lines:
        print(f"  {label:<28} p50 {p50:7.2f} ms   p99 {p99:7.2f} ms")
    print(f"  overhead p50 / {GOAL_MS:g} ms goal    {result.overhead_p50 / GOAL_MS:7.3f}")
    print(f"  pipeline p50 / raw p50       {result.pipeline_p50 / result.raw_p50:7.3f}")


if __name__ == "__main__":
    main()
