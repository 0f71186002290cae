"""Benchmark of session export and import: ``python -m bench.export [--quick]``.

Rows (:mod:`bench.report`) for a session of 1,000 logical turns, each
``user → assistant(tool call) → tool → assistant(text)``, i.e. 4,000 messages with realistic
lengths, stored in a real encrypted history database:

1. reading the session back (row + every visible message, one snapshot);
2. YAML workflow export (build + serialize) and JSONL export;
3. parsing the YAML back (strict) and checking parse → serialize is byte-identical;
4. JSONL import: validating the file, then writing the new session in one transaction.

Each step is the best of 3 runs (one run with ``--quick``). The anchor of the YAML rows is
the same work in JSONL, measured in the same run. The pure-computation steps (YAML and JSONL
export, parsing, validating) are timed in CPU seconds — on a shared machine wall time also
counts every other process — with the wall time of one run in the row's note.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from bench.report import Goal, Row, print_rows
from relavium_lsp.contracts.agent import DEFAULT_AGENT
from relavium_lsp.contracts.content import (
    DurableReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.session import AgentSessionRecord, SessionContext, SessionMessage
from relavium_lsp.export.jsonl import export_jsonl
from relavium_lsp.export.jsonl_import import import_jsonl
from relavium_lsp.export.workflow_yaml import (
    export_workflow_yaml,
    parse_workflow,
    serialize_workflow,
)
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.models import utc_timestamp
from relavium_lsp.store.sessions import SessionStore

T = TypeVar("T")
CPU = time.process_time
SESSION_ID = "bench-export-session"
PARAGRAPH = (
    "The handler validates its params with pydantic, calls the engine and maps domain errors "
    "to JSON-RPC codes at the edge; nothing else in the server knows about JSON-RPC. "
)


def _session(turns: int) -> tuple[AgentSessionRecord, list[SessionMessage]]:
    now = utc_timestamp()
    record = AgentSessionRecord(
        id=SESSION_ID,
        agent_slug=DEFAULT_AGENT.id,
        agent_snapshot=DEFAULT_AGENT.model_dump(mode="json"),
        title="Benchmark: a very long refactoring session",
        model_id="claude-sonnet-4-5",
        context=SessionContext(working_dir="/work/project"),
        turn_count=turns,
        created_at=now,
        updated_at=now,
    )
    messages: list[SessionMessage] = []

    def add(role: str, content: list[object]) -> None:
        messages.append(
            SessionMessage.model_validate(
                {
                    "id": f"m-{len(messages) + 1}",
                    "sessionId": SESSION_ID,
                    "sequenceNumber": len(messages) + 1,
                    "role": role,
                    "content": content,
                    "modelId": "claude-sonnet-4-5" if role == "assistant" else None,
                    "timestamp": now,
                }
            )
        )

    for turn in range(1, turns + 1):
        call_id = f"call-{turn}"
        add("user", [TextPart(text=f"Step {turn}: refactor module_{turn}.py; keep {{{{ctx}}}}.")])
        add(
            "assistant",
            [
                DurableReasoningPart(text="Read the module before changing it."),
                ToolCallPart(id=call_id, name="read_file", args={"path": f"src/module_{turn}.py"}),
            ],
        )
        source = "\n".join(f"def function_{i}(x):\n    return x * {i}" for i in range(20))
        add("tool", [ToolResultPart(tool_call_id=call_id, result=source)])
        add("assistant", [TextPart(text=PARAGRAPH * 3 + f"\n\nDone with step {turn}.")])
    return record, messages


def _best(
    repeats: int, work: Callable[[], T], clock: Callable[[], float] = time.perf_counter
) -> tuple[float, T]:
    best = float("inf")
    result: T | None = None
    for _ in range(repeats):
        started = clock()
        result = work()
        best = min(best, clock() - started)
    assert result is not None
    return best, result


def measure(turns: int, repeats: int) -> dict[str, float]:
    """Seconds for each step on a session of ``turns`` logical turns (plus sizes)."""
    record, messages = _session(turns)
    with tempfile.TemporaryDirectory(prefix="relavium-bench-export-") as folder:
        store = SessionStore.open(Path(folder) / "history.db", DbKey(os.urandom(32), "env"))
        try:
            store.import_session(record, messages)
            read_s, snapshot = _best(repeats, lambda: store.export_snapshot(SESSION_ID))
            assert snapshot is not None
            # Pure computation, timed in CPU seconds: on a busy machine wall time measures the
            # other processes too. The JSONL anchors are timed the same way in the same run.
            yaml_s, yaml_text = _best(repeats, lambda: export_workflow_yaml(*snapshot), CPU)
            jsonl_s, jsonl_text = _best(repeats, lambda: export_jsonl(*snapshot), CPU)
            parse_s, document = _best(repeats, lambda: parse_workflow(yaml_text), CPU)
            wall_yaml_s, _ = _best(1, lambda: export_workflow_yaml(*snapshot))
            wall_parse_s, _ = _best(1, lambda: parse_workflow(yaml_text))
            assert serialize_workflow(document) == yaml_text  # parse → serialize is stable
            validate_s, imported = _best(repeats, lambda: import_jsonl(jsonl_text), CPU)
            started = time.perf_counter()
            store.import_session(imported.record, imported.messages)
            write_s = time.perf_counter() - started
            assert store.check_integrity() == ["ok"]
        finally:
            store.close()
    return {
        "read": read_s,
        "yaml": yaml_s,
        "jsonl": jsonl_s,
        "parse": parse_s,
        "validate": validate_s,
        "write": write_s,
        "wall_yaml": wall_yaml_s,
        "wall_parse": wall_parse_s,
        "yaml_mb": len(yaml_text.encode()) / 1e6,
        "jsonl_mb": len(jsonl_text.encode()) / 1e6,
    }


def rows(quick: bool) -> list[Row]:
    """Export/import of a 1,000-turn session (the goals are per 1,000 turns either way)."""
    turns, repeats = 1_000, 1 if quick else 3
    seconds = measure(turns, repeats)
    session = f"{turns:,} turns"
    best = f"best of {repeats}" if repeats > 1 else "one run"
    return [
        Row(
            f"YAML workflow export, {session}",
            seconds["yaml"],
            "s",
            anchor="JSONL export",
            anchor_value=seconds["jsonl"],
            goal=Goal(1.0, on="value", strict=True),
            note=f"CPU s, {best} (wall {seconds['wall_yaml']:.2f} s); "
            f"{seconds['yaml_mb']:.2f} MB YAML vs {seconds['jsonl_mb']:.2f} MB JSONL",
        ),
        Row(
            f"YAML parse-back (strict), {session}",
            seconds["parse"],
            "s",
            anchor="JSONL import: validate",
            anchor_value=seconds["validate"],
            goal=Goal(1.0, on="value", strict=True),
            note=f"CPU s, {best} (wall {seconds['wall_parse']:.2f} s)",
        ),
        Row(f"read session snapshot, {session}", seconds["read"], "s"),
        Row(
            f"JSONL import: write (1 txn), {session}",
            seconds["write"],
            "s",
            anchor="JSONL import: validate",
            anchor_value=seconds["validate"],
        ),
    ]


def main() -> None:
    """Run the benchmark and print its rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    print_rows(rows(parser.parse_args().quick))


if __name__ == "__main__":
    main()
