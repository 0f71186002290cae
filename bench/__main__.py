"""Run every benchmark and print one table: ``python -m bench [--quick] [--only a,b]``.

``make bench`` / ``make bench-quick``. Each module in :data:`MODULES` runs in its own child
process (so one module's heap, threads and environment cannot colour another's timings), all
under this one process; each returns rows (:class:`bench.report.Row`), which this runner
prints as one table — measure, value, the anchor measured in the same run, the ratio, the
goal, pass/miss — and writes as JSON (``bench/results/latest.json``, or ``latest-quick.json``
for ``--quick``) with the machine facts, for comparison across commits.

Nothing here asserts: a miss is printed, never raised (timing belongs in ``bench/``, not in
``make test``). The exit status is non-zero only when a benchmark module itself failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.report import Row, coerce, table_lines

MODULES = (
    "export",
    "store",
    "tools",
    "mcp",
    "search",
    "providers",
    "engine",
    "lsp",
    "windows",
    "rewind",
    "neovim",
    "vscode_chat",
)
NO_ROWS = 3  # a child's exit status: the module does not return rows (yet)
RESULTS = Path(__file__).parent / "results"


def machine_facts(quick: bool) -> dict[str, Any]:
    """What the numbers depend on: CPUs, load, Python, SQLite/SQLCipher, the commit."""
    import sqlcipher3  # only the runner needs it, not every benchmark module

    connection = sqlcipher3.connect(":memory:")
    try:
        # The provider pragmas answer only once a key is set (any key: nothing is stored).
        connection.execute("PRAGMA key = \"x'" + "00" * 32 + "'\"")
        cipher_version = connection.execute("PRAGMA cipher_version").fetchone()[0]
        provider = connection.execute("PRAGMA cipher_provider_version").fetchone()[0]
    finally:
        connection.close()
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "cpu_count": os.cpu_count(),
        "load_average": [round(value, 2) for value in os.getloadavg()],
        "python": platform.python_version(),
        "platform": platform.platform(),
        "sqlcipher": f"{cipher_version} ({provider}; SQLite {sqlcipher3.sqlite_version})",
        "sqlite3": sqlite3.sqlite_version,
        "commit": _git("rev-parse", "--short", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
    }


def _git(*arguments: str) -> str:
    try:
        return subprocess.run(
            ["git", *arguments], capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def run_child(name: str, quick: bool, out: Path) -> None:
    """In the child: import ``bench.<name>``, call ``rows(quick)``, write them as JSON."""
    module = importlib.import_module(f"bench.{name}")
    produce = getattr(module, "rows", None)
    if produce is None:
        print(f"bench.{name} has no rows(quick) function yet: skipped", file=sys.stderr)
        raise SystemExit(NO_ROWS)
    rows = [coerce(row) for row in produce(quick)]
    out.write_text(json.dumps([row.to_json() for row in rows]), encoding="utf-8")


def run_module(name: str, quick: bool) -> tuple[list[Row], str | None]:
    """Run one module in a child process; its rows, or the reason it produced none."""
    print(f"== bench.{name}{' (quick)' if quick else ''}", flush=True)
    with tempfile.TemporaryDirectory(prefix="relavium-bench-rows-") as scratch:
        out = Path(scratch) / "rows.json"
        command = [sys.executable, "-m", "bench", "--child", name, "--out", str(out)]
        started = time.perf_counter()
        completed = subprocess.run([*command, *(["--quick"] if quick else [])], check=False)
        elapsed = time.perf_counter() - started
        if completed.returncode == NO_ROWS:
            return [], None
        if completed.returncode != 0 or not out.exists():
            return [], f"bench.{name} failed (exit {completed.returncode}) after {elapsed:.0f} s"
        rows = [Row.from_json(data) for data in json.loads(out.read_text(encoding="utf-8"))]
    print(f"   ({elapsed:.0f} s)", flush=True)
    return [dataclasses.replace(row, group=name) for row in rows], None


def main() -> None:
    """Run the benchmarks, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs (about 2 minutes)")
    parser.add_argument("--only", help="comma-separated module names (default: all)")
    parser.add_argument("--out", type=Path, help="where to write the JSON")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        run_child(arguments.child, arguments.quick, arguments.out)
        return
    names = arguments.only.split(",") if arguments.only else list(MODULES)
    unknown = sorted(set(names) - set(MODULES))
    if unknown:
        parser.error(f"unknown module(s): {', '.join(unknown)}; choose from {', '.join(MODULES)}")
    facts = machine_facts(arguments.quick)
    started = time.perf_counter()
    rows: list[Row] = []
    errors: list[str] = []
    for name in names:
        produced, error = run_module(name, arguments.quick)
        rows += produced
        if error:
            errors.append(error)
    facts["duration_s"] = round(time.perf_counter() - started, 1)
    facts["load_average_after"] = [round(value, 2) for value in os.getloadavg()]
    print_report(facts, rows, errors)
    out = arguments.out or RESULTS / ("latest-quick.json" if arguments.quick else "latest.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    document = {"facts": facts, "rows": [row.to_json() for row in rows], "errors": errors}
    out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    if errors:
        raise SystemExit(1)


def print_report(facts: dict[str, Any], rows: list[Row], errors: list[str]) -> None:
    """The header of machine facts, then the table, then a pass/miss summary."""
    print()
    print(
        f"relavium-lsp benchmarks — {facts['date']}  commit {facts['commit'] or '?'}"
        f"{' (dirty)' if facts['dirty'] else ''}{'  QUICK' if facts['quick'] else ''}"
    )
    print(
        f"{facts['cpu_count']} CPUs, load {facts['load_average']} → "
        f"{facts['load_average_after']}, Python {facts['python']}, {facts['platform']}"
    )
    print(f"SQLCipher {facts['sqlcipher']}; stdlib sqlite3 {facts['sqlite3']}")
    print(f"total {facts['duration_s']} s\n")
    print("\n".join(table_lines(rows)))
    verdicts = [row.verdict for row in rows if row.verdict]
    print(
        f"\ngoals: {verdicts.count('pass')} pass, {verdicts.count('miss')} miss"
        + (f", {verdicts.count('n/a')} n/a" if "n/a" in verdicts else "")
    )
    for error in errors:
        print(f"ERROR: {error}")


if __name__ == "__main__":
    main()
