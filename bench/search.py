"""Code search: ``search_files`` over 5,000 files against running ``rg`` directly.

Run: ``python -m bench.search [--quick]``. Rows (:mod:`bench.report`):

- search_files, 5,000 files (goal: at most 2x the anchor): one ``search_files`` call through the
  registry — validation, the jail, opening the root, ripgrep with ``--json``, parsing, caps,
  formatting, events — for a symbol defined once. Anchor: the same ``rg`` binary run directly
  on the same tree for the same literal (plain output, gitignore respected), awaited the same
  way, so the ratio is what the tool adds to the search itself.
- find_files, 5,000 files, against ``rg --files --sort path`` with the same glob (the tool
  lists paths sorted, so the anchor sorts too).
- the pure-Python fallback (context only: it runs only when no ``rg`` is installed).

Samples are interleaved (tool, anchor, tool, …) so load on the shared machine colours both.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.report import Goal, Row, print_rows
from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.content import ToolCallPart
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.tools import rg as ripgrep
from relavium_lsp.tools.base import ToolCallContext
from relavium_lsp.tools.host import FilesystemHost
from relavium_lsp.tools.registry import default_registry
from relavium_lsp.tools.runner import minimal_env

FILES = 5_000
SYMBOL = "class UniqueSymbolXyz"


class MemoryArtifacts:
    def __init__(self) -> None:
        self.saved: dict[str, str] = {}

    async def save_artifact(self, session_id: str, call_id: str, text: str) -> str:
        self.saved[call_id] = text
        return call_id

    async def load_artifact(self, session_id: str, artifact_id: str) -> str | None:
        return self.saved.get(artifact_id)


def build_workspace(root: Path, files: int = FILES) -> Path:
    """``files`` Python modules in 50 packages, plus an ignored tree of 1,000 more."""
    workspace = root / "ws"
    for index in range(files):
        package = workspace / "src" / f"pkg{index // 100:02d}"
        package.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def helper_{index}_{n}(v):\n    return v + {n}\n" for n in range(8))
        if index == files - 7:
            body += f"\n{SYMBOL}:\n    pass\n"
        (package / f"mod{index:04d}.py").write_text(body)
    ignored = workspace / "node_modules" / "dep"
    ignored.mkdir(parents=True)
    for index in range(1_000):
        (ignored / f"f{index}.js").write_text(f"// {SYMBOL} copy {index}\n")
    (workspace / ".gitignore").write_text("node_modules/\n")
    return workspace


async def _time(fn: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start


async def _run_rg(argv: list[str], cwd: Path) -> bytes:
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=minimal_env(cwd, cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    out, _ = await process.communicate()
    return out


async def measure(samples: int) -> list[Row]:
    rg = ripgrep.find_rg()
    if rg is None:
        return [Row("search_files: no rg binary found", float("nan"), "ms")]
    with tempfile.TemporaryDirectory(prefix="relavium-bench-search-") as scratch:
        root = Path(scratch)
        workspace = build_workspace(root)
        temp_dir = root / "tmp"
        temp_dir.mkdir()
        registry = default_registry()
        host = FilesystemHost()
        events: list[object] = []
        ctx = ToolCallContext(
            session_id="bench",
            context=SessionContext(working_dir=str(workspace)),
            policy=EffectiveChatPolicy(),
            host=host,
            emit=events.append,
            ask_user=host.request_approval,
            artifacts=MemoryArtifacts(),
            model="bench",
            allowed_tools=frozenset(registry.names),
            temp_dir=temp_dir,
        )
        ids = itertools.count()

        def tool(name: str, args: dict[str, object]) -> Callable[[], Awaitable[object]]:
            async def go() -> object:
                events.clear()
                call = ToolCallPart(id=f"c{next(ids)}", name=name, args=args)
                answer = await registry.dispatch(call, ctx)
                assert not answer.result.is_error, answer.result.result
                return answer

            return go

        def direct(argv: list[str]) -> Callable[[], Awaitable[object]]:
            async def go() -> object:
                return await _run_rg(argv, workspace)

            return go

        base = [rg, "--no-require-git", "--hidden", "-g", "!.git"]
        cases = [
            (
                f"search_files, {FILES:,} files",
                tool("search_files", {"pattern": SYMBOL}),
                f"rg '{SYMBOL}' directly",
                direct([*base, "-F", "-n", SYMBOL, "./"]),
            ),
            (
                f"find_files '*4321.py', {FILES:,} files",
                tool("find_files", {"pattern": "*4321.py"}),
                "rg --files --sort path -g directly",
                direct([*base, "--files", "--sort", "path", "-g", "*4321.py", "./"]),
            ),
        ]
        rows: list[Row] = []
        for measure_name, ours, anchor_name, anchor in cases:
            for _ in range(3):  # warm the page cache and the interpreter
                await ours()
                await anchor()
            mine: list[float] = []
            theirs: list[float] = []
            for _ in range(samples):
                mine.append(await _time(ours))
                theirs.append(await _time(anchor))
            rows.append(
                Row(
                    measure=measure_name + ", median",
                    value=statistics.median(mine) * 1000,
                    unit="ms",
                    anchor=anchor_name,
                    anchor_value=statistics.median(theirs) * 1000,
                    goal=Goal(2.0),
                    note=f"n={samples} interleaved",
                )
            )
        original = ripgrep.find_rg
        ripgrep.find_rg = lambda: None  # type: ignore[assignment]
        try:
            fallback = tool("search_files", {"pattern": SYMBOL})
            await fallback()
            slow = [await _time(fallback) for _ in range(max(3, samples // 5))]
        finally:
            ripgrep.find_rg = original  # type: ignore[assignment]
        rows.append(
            Row(
                measure=f"search_files without rg (Python fallback), {FILES:,} files, median",
                value=statistics.median(slow) * 1000,
                unit="ms",
                note="context only: used when no rg binary is installed",
            )
        )
        return rows


def rows(quick: bool) -> list[Row]:
    """The search rows (``quick``: fewer samples on the same 5,000-file tree)."""
    return asyncio.run(measure(8 if quick else 30))


def main() -> None:
    """Run the benchmark and print its rows."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    print_rows(rows(parser.parse_args().quick))


if __name__ == "__main__":
    main()
