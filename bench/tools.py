"""Tool registry overhead and scope-jail cost, as p50/p99 per call.

Run: ``python -m bench.tools [--quick]``. Rows (:mod:`bench.report`); no goals, context only.

- dispatch (trivial tool): validation + availability + events + bounding around a tool that
  returns its input — the registry's own overhead per call.
- dispatch (read_file, small file): the same plus jail, open + descriptor re-check, disk read.
- dispatch (bounded 200 KB result): head/tail preview + artifact save.
- jail: ``resolve_in_scope`` for an existing file, a new nested file, and a refused escape.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.report import Row, print_rows
from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.content import ToolCallPart
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.errors import ToolDenied
from relavium_lsp.tools.base import PreparedCall, ToolArgs, ToolCallContext, ToolDefinition, ToolRun
from relavium_lsp.tools.host import FilesystemHost
from relavium_lsp.tools.jail import resolve_in_scope
from relavium_lsp.tools.registry import ToolRegistry, default_registry


class MemoryArtifacts:
    def __init__(self) -> None:
        self.saved: dict[tuple[str, str], str] = {}
        self._ids = itertools.count()

    async def save_artifact(self, session_id: str, call_id: str, text: str) -> str:
        artifact_id = f"a{next(self._ids)}"
        self.saved[(session_id, artifact_id)] = text
        return artifact_id

    async def load_artifact(self, session_id: str, artifact_id: str) -> str | None:
        return self.saved.get((session_id, artifact_id))


class EchoArgs(ToolArgs):
    text: str


async def _prepare_echo(args: EchoArgs, ctx: ToolCallContext) -> PreparedCall:
    async def run() -> ToolRun:
        return ToolRun(args.text)

    return PreparedCall(run=run)


ECHO = ToolDefinition(
    name="echo",
    description="Echo.",
    args_model=EchoArgs,
    side_effect="read",
    replay="pure",
    prepare=_prepare_echo,
)


def _percentiles(samples_ns: list[int]) -> tuple[float, float]:
    ordered = sorted(samples_ns)
    p50 = statistics.median(ordered) / 1000
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] / 1000
    return p50, p99


async def _time_async(fn: Callable[[], Awaitable[object]], n: int) -> list[int]:
    for _ in range(min(200, n)):
        await fn()
    samples = []
    for _ in range(n):
        start = time.perf_counter_ns()
        await fn()
        samples.append(time.perf_counter_ns() - start)
    return samples


def _time_sync(fn: Callable[[], object], n: int) -> list[int]:
    for _ in range(min(200, n)):
        fn()
    samples = []
    for _ in range(n):
        start = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - start)
    return samples


def _row(label: str, samples: list[int]) -> tuple[float, float]:
    p50, p99 = _percentiles(samples)
    print(f"  {label:<44} p50 {p50:9.1f} us   p99 {p99:9.1f} us   (n={len(samples):,})")
    ROWS.append(Row(f"tool {label}, p50", p50, "µs", note=f"p99 {p99:.1f} µs, n={len(samples):,}"))
    return p50, p99


ROWS: list[Row] = []


async def measure(scale: float) -> None:
    """Time every case with ``scale`` times the full sample counts; rows go to ``ROWS``."""

    def n(count: int) -> int:
        return max(50, int(count * scale))

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        workspace, temp_dir = root / "ws", root / "tmp"
        (workspace / "src" / "pkg").mkdir(parents=True)
        temp_dir.mkdir()
        (workspace / "src" / "pkg" / "mod.py").write_text("print('hello')\n" * 20)
        (workspace / "huge.txt").write_text("x" * 79 + "\n" * 1 + ("y" * 99 + "\n") * 2000)
        events: list[object] = []
        registry = ToolRegistry([ECHO, *(default_registry().get(n) for n in ("read_file",))])
        host = FilesystemHost()
        ctx = ToolCallContext(
            session_id="bench",
            context=SessionContext(working_dir=str(workspace)),
            policy=EffectiveChatPolicy(),
            host=host,
            emit=events.append,
            ask_user=host.request_approval,
            artifacts=MemoryArtifacts(),
            model="bench-model",
            allowed_tools=frozenset({"echo", "read_file"}),
            temp_dir=temp_dir,
        )
        ids = itertools.count()

        def call(name: str, args: dict[str, object]) -> Callable[[], Awaitable[object]]:
            async def go() -> object:
                events.clear()
                part = ToolCallPart(id=f"c{next(ids)}", name=name, args=args)
                return await registry.dispatch(part, ctx)

            return go

        print("Registry dispatch (per call)")
        trivial = _row(
            "trivial tool (validate+events+bound)",
            await _time_async(call("echo", {"text": "hello world"}), n(20_000)),
        )
        _row(
            "read_file, 300-byte file",
            await _time_async(call("read_file", {"path": "src/pkg/mod.py"}), n(5_000)),
        )
        _row(
            "read_file, 200 KB -> bounded + artifact",
            await _time_async(call("read_file", {"path": "huge.txt"}), n(500)),
        )
        _row(
            "unknown tool (tool_unavailable)",
            await _time_async(call("nope", {"x": 1}), n(20_000)),
        )

        print("Scope jail (per path)")
        roots = ctx.scope_roots()
        jail_existing = _row(
            "existing nested file",
            _time_sync(
                lambda: resolve_in_scope("src/pkg/mod.py", roots, must_exist=True, for_write=False),
                n(50_000),
            ),
        )
        _row(
            "new file for write",
            _time_sync(
                lambda: resolve_in_scope(
                    "src/pkg/new_module.py", roots, must_exist=False, for_write=True
                ),
                n(50_000),
            ),
        )

        def refused() -> None:
            try:
                resolve_in_scope("../../etc/passwd", roots, must_exist=True, for_write=False)
            except ToolDenied:
                return

        _row("refused escape (../../etc/passwd)", _time_sync(refused, n(50_000)))
        _row(
            "ToolCallContext.scope_roots (per call)",
            _time_sync(ctx.scope_roots, n(50_000)),
        )

        print("Ratios")
        print(f"  trivial dispatch p50 / 1 ms budget     {trivial[0] / 1000:8.3f}")
        print(f"  jail p50 / 1 ms budget                 {jail_existing[0] / 1000:8.3f}")
        print(f"  jail p50 / trivial dispatch p50        {jail_existing[0] / trivial[0]:8.3f}")


def rows(quick: bool) -> list[Row]:
    """Registry dispatch and scope-jail costs per call (``quick``: a fifth of the samples)."""
    ROWS.clear()
    asyncio.run(measure(0.2 if quick else 1.0))
    return list(ROWS)


def main() -> None:
    """Run the benchmark and print its rows."""
    print_rows(rows(quick="--quick" in sys.argv))


if __name__ == "__main__":
    main()
