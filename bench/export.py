"""Benchmark of session export and import: ``python -m bench.export [--turns N]``.

Prints numbers and ratios (never pass/fail) for a session of N logical turns (default
1,000), each ``user → assistant(tool call) → tool → assistant(text)``, i.e. 4·N messages
with realistic lengths, stored in a real encrypted history database:

1. reading the session back (row + every visible message, one snapshot);
2. YAML workflow export (build + serialize) and JSONL export;
3. parsing the YAML back (strict) and checking parse → serialize is byte-identical;
4. JSONL import: validating the file, then writing the new session in one transaction.

The fast steps are timed as the best of ``--repeats`` runs; the two YAML steps (pure-Python
ruamel.yaml, seconds each) run once so the whole benchmark stays around half a minute.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from relavium_lsp.contracts.agent import DEFAULT_AGENT
from relavium_lsp.contracts.content import (
    DurableReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.session import AgentSessionRecord, SessionContext, SessionMessage
from relavium_lsp.export.jsonl import export_jsonl, import_jsonl
from relavium_lsp.export.workflow_yaml import (
    export_workflow_yaml,
    parse_workflow,
    serialize_workflow,
)
from relavium_lsp.store.keys import DbKey
from relavium_lsp.store.models import utc_timestamp
from relavium_lsp.store.sessions import SessionStore

T = TypeVar("T")
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


def _best(repeats: int, work: Callable[[], T]) -> tuple[float, T]:
    best = float("inf")
    result: T | None = None
    for _ in range(repeats):
        started = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - started)
    assert result is not None
    return best, result


def main() -> None:
    """Run the benchmark and print its numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    turns, repeats = arguments.turns, arguments.repeats
    record, messages = _session(turns)
    with tempfile.TemporaryDirectory(prefix="relavium-bench-export-") as folder:
        store = SessionStore.open(Path(folder) / "history.db", DbKey(os.urandom(32), "env"))
        try:
            store.import_session(record, messages)
            read_s, snapshot = _best(repeats, lambda: store.export_snapshot(SESSION_ID))
            assert snapshot is not None
            yaml_s, yaml_text = _best(1, lambda: export_workflow_yaml(*snapshot))
            jsonl_s, jsonl_text = _best(repeats, lambda: export_jsonl(*snapshot))
            parse_s, document = _best(1, lambda: parse_workflow(yaml_text))
            assert serialize_workflow(document) == yaml_text
            validate_s, imported = _best(repeats, lambda: import_jsonl(jsonl_text))
            started = time.perf_counter()
            store.import_session(*imported)
            write_s = time.perf_counter() - started
            assert store.check_integrity() == ["ok"]
        finally:
            store.close()
    count = len(messages)
    print(
        f"session: {turns:,} turns = {count:,} messages (encrypted store; best of {repeats}, "
        "YAML steps once)"
    )
    rows = [
        ("read row + messages (snapshot)", read_s, None),
        ("YAML workflow export", yaml_s, len(yaml_text)),
        ("JSONL export", jsonl_s, len(jsonl_text)),
        ("YAML parse (strict)", parse_s, None),
        ("JSONL import: validate", validate_s, None),
        ("JSONL import: write (1 txn)", write_s, None),
    ]
    for label, seconds, size in rows:
        per_turn = seconds / turns * 1e3
        extra = f"  {size / 1e6:6.2f} MB" if size else ""
        print(f"  {label:<32} {seconds * 1e3:9.1f} ms  ({per_turn:.3f} ms/turn){extra}")
    print(f"  ratio YAML export / JSONL export:   {yaml_s / jsonl_s:6.1f}x")
    print(f"  ratio JSONL import total / export:  {(validate_s + write_s) / jsonl_s:6.1f}x")
    print(f"  export end to end (read + YAML):    {(read_s + yaml_s) * 1e3:9.1f} ms")


if __name__ == "__main__":
    main()
