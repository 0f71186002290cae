"""Benchmark of the encrypted session store: ``python -m bench.store [--quick]``.

Rows (:mod:`bench.report`), plus details printed along the way:

1. append latency per durable message — SQLCipher vs stdlib ``sqlite3`` with the same schema
   and pragmas (``synchronous=FULL``, the store's default), plus both with ``NORMAL`` to show
   the encryption's CPU cost without the fsync; the variants' appends are interleaved;
2. tail load (the resume path) for sessions of 100 / 10,000 / 100,000 messages — p50 of
   repeated loads with the same budget; it should be flat;
3. ``list_sessions`` over 10,000 sessions — first page, a filtered page, a deep page;
4. a full-text query over 100,000 messages.

Big fixtures are bulk-inserted in one transaction (same rows the repository writes), so the
run takes well under two minutes.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from bench.report import Goal, Row, print_rows
from relavium_lsp.contracts.content import TextPart, estimate_tokens, plain_text
from relavium_lsp.contracts.session import AgentSessionRecord, SessionContext
from relavium_lsp.store.db.connection import Synchronous, configure_connection
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.db.migrations import migrate
from relavium_lsp.store.models import compact_json, utc_timestamp
from relavium_lsp.store.rows.listing import fts_match_expression
from relavium_lsp.store.sessions import SessionStore

TAIL_BUDGET = 4_000
RARE_WORD = "zanzibar"


def _record(
    session_id: str, working_dir: str = "/ws/main", status: str = "idle"
) -> AgentSessionRecord:
    now = utc_timestamp()
    return AgentSessionRecord.model_validate(
        {
            "id": session_id,
            "agentSlug": "relavium-default",
            "agentSnapshot": {"id": "relavium-default"},
            "context": SessionContext(working_dir=working_dir),
            "status": status,
            "createdAt": now,
            "updatedAt": now,
        }
    )


def _open_sqlcipher(path: Path, synchronous: Synchronous | None = None) -> SessionStore:
    return SessionStore.open(path, DbKey(os.urandom(32), "env"), synchronous=synchronous)


def _open_plain(path: Path, synchronous: Synchronous) -> SessionStore:
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    configure_connection(connection, synchronous=synchronous)
    migrate(connection)
    return SessionStore(connection)


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def _timed(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.3f} ms"


def bench_append(directory: Path, count: int) -> list[Row]:
    """Durable append latency, SQLCipher vs stdlib sqlite3, interleaved append by append.

    The variants take turns (in a shuffled order each round) rather than running one after
    the other, so a burst of load from anything else on the machine — other processes'
    fsyncs, CPU contention — lands on all of them alike and the ratio stays meaningful.
    """
    print(f"\n## append latency per durable message ({count} appends each, interleaved)")
    words = "the quick brown fox jumps over the lazy dog while reviewing main.py".split()
    variants: dict[str, SessionStore] = {
        "sqlite3 FULL": _open_plain(directory / "append-plain-full.db", "FULL"),
        "sqlcipher FULL": _open_sqlcipher(directory / "append-cipher-full.db", "FULL"),
        "sqlite3 NORMAL": _open_plain(directory / "append-plain-normal.db", "NORMAL"),
        "sqlcipher NORMAL": _open_sqlcipher(directory / "append-cipher-normal.db", "NORMAL"),
    }
    samples: dict[str, list[float]] = {name: [] for name in variants}
    rng = random.Random(1)
    try:
        for store in variants.values():
            store.create_session(_record("s"))
        order = list(variants)
        for _ in range(count):
            content = [TextPart(text=" ".join(rng.choices(words, k=40)))]
            rng.shuffle(order)
            for name in order:
                start = time.perf_counter()
                variants[name].append_message("s", "assistant", content)
                samples[name].append(time.perf_counter() - start)
    finally:
        for store in variants.values():
            store.close()
    for name, values in samples.items():
        print(
            f"{name:18} p50 {_ms(_percentile(values, 0.5))}  p95 {_ms(_percentile(values, 0.95))}"
            f"  mean {_ms(statistics.fmean(values))}"
        )
    median = {name: statistics.median(values) * 1000 for name, values in samples.items()}
    return [
        Row(
            "SQLCipher durable append (FULL), p50",
            median["sqlcipher FULL"],
            "ms",
            anchor="plain sqlite3 (FULL)",
            anchor_value=median["sqlite3 FULL"],
            goal=Goal(2.0),
            note="same schema and pragmas; interleaved appends; includes the commit's fsync",
        ),
        Row(
            "SQLCipher append (NORMAL, no fsync), p50",
            median["sqlcipher NORMAL"],
            "ms",
            anchor="plain sqlite3 (NORMAL)",
            anchor_value=median["sqlite3 NORMAL"],
            note="the encryption's CPU cost without the disk: AES-256-CBC + HMAC-SHA512 per page",
        ),
    ]


def _bulk_messages(store: SessionStore, session_id: str, count: int, rng: random.Random) -> None:
    """Insert ``count`` visible messages exactly as the repository would, in one transaction."""
    vocabulary = [f"w{index:04d}" for index in range(3_000)]
    connection = store.connection
    rows = []
    fts = []
    cumulative = 0
    now = utc_timestamp()
    base_rowid = int(
        connection.execute(
            "SELECT COALESCE(MAX(message_rowid), 0) FROM session_messages"
        ).fetchone()[0]
    )
    for sequence in range(1, count + 1):
        words = rng.choices(vocabulary, k=35)
        if sequence % 10_000 == 7:
            words.append(RARE_WORD)
        parts = [TextPart(text=" ".join(words))]
        text = plain_text(parts)
        tokens = estimate_tokens(parts)
        cumulative += tokens
        rowid = base_rowid + sequence
        role = "user" if sequence % 2 else "assistant"
        content = compact_json([part.model_dump(mode="json", by_alias=True) for part in parts])
        rows.append(
            (
                rowid,
                str(uuid.uuid4()),
                session_id,
                sequence,
                role,
                content,
                text,
                tokens,
                sequence,
                cumulative,
                now,
                None if role == "user" else "relavium-default",  # every answer has its author
            )
        )
        fts.append((rowid, text, session_id))
    connection.execute("BEGIN IMMEDIATE")
    connection.executemany(
        "INSERT INTO session_messages (message_rowid, id, session_id, sequence_number, role,"
        " content, plain_text, token_estimate, visible_ordinal, cumulative_tokens, timestamp,"
        " agent_slug) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    connection.executemany(
        "INSERT INTO session_messages_fts (rowid, plain_text, session_id) VALUES (?, ?, ?)", fts
    )
    connection.execute(
        "UPDATE agent_sessions SET message_count = ? WHERE id = ?", (count, session_id)
    )
    connection.execute("COMMIT")


def bench_tail_and_fts(directory: Path, sizes: list[int], repeat: int) -> list[Row]:
    print(f"\n## resume: tail within a {TAIL_BUDGET}-token budget (p50 of {repeat} loads)")
    store = _open_sqlcipher(directory / "tail.db")
    rng = random.Random(2)
    build_start = time.perf_counter()
    for size in sizes:
        store.create_session(_record(f"tail-{size}"))
        _bulk_messages(store, f"tail-{size}", size, rng)
    built = time.perf_counter() - build_start
    print(f"(fixture: {sum(sizes):,} messages bulk-inserted in {built:.1f} s)")
    p50s = {}
    for size in sizes:
        session_id = f"tail-{size}"
        loaded = store.load_tail_within_budget(session_id, TAIL_BUDGET)
        tail = _timed(
            lambda sid=session_id: store.load_tail_within_budget(sid, TAIL_BUDGET), repeat
        )
        count = _timed(lambda sid=session_id: store.count_tokens_since_boundary(sid), repeat)
        page = _timed(lambda sid=session_id: store.get_transcript(sid, limit=100), repeat)
        p50s[size] = _percentile(tail, 0.5)
        print(
            f"{size:>7,} messages: tail {_ms(p50s[size])} ({len(loaded)} msgs)"
            f"  count-since-boundary {_ms(_percentile(count, 0.5))}"
            f"  transcript page {_ms(_percentile(page, 0.5))}"
        )
    smallest, largest = min(sizes), max(sizes)
    print(
        f"ratio tail {largest:,} / {smallest:,}: {p50s[largest] / p50s[smallest]:5.2f}x (flat ≈ 1)"
    )
    produced = [
        Row(
            f"resume: tail load, {largest:,}-message session, p50",
            p50s[largest] * 1000,
            "ms",
            anchor=f"{smallest:,}-message session",
            anchor_value=p50s[smallest] * 1000,
            note=f"{TAIL_BUDGET:,}-token budget; flat (ratio ≈ 1) means resume ignores history",
        )
    ]

    largest_id = f"tail-{largest}"
    print(f"\n## full-text search over {sum(sizes):,} messages (p50 of {repeat})")
    for label, query in (
        ("rare word", RARE_WORD),
        ("common word", "w0042"),
        ("two words + prefix", "w0042 w01"),
    ):
        samples = _timed(lambda q=query: store.list_sessions(query=q), repeat)
        hits = store.connection.execute(
            "SELECT count(*) FROM session_messages_fts WHERE session_messages_fts MATCH ?",
            (fts_match_expression(query),),
        ).fetchone()[0]
        found = [s.id for s in store.list_sessions(query=query).sessions]
        print(
            f"{label:20} {_ms(_percentile(samples, 0.5))}  ({hits:,} matching messages,"
            f" sessions {found if len(found) < 4 else len(found)})"
        )
        produced.append(
            Row(
                f"full-text search over {sum(sizes):,} messages: {label}, p50",
                _percentile(samples, 0.5) * 1000,
                "ms",
            )
        )
    assert largest_id in [s.id for s in store.list_sessions(query=RARE_WORD).sessions]
    store.close()
    return produced


def bench_list(directory: Path, sessions: int, repeat: int) -> list[Row]:
    print(f"\n## list_sessions over {sessions:,} sessions (p50 of {repeat})")
    store = _open_sqlcipher(directory / "list.db")
    connection = store.connection
    rows = []
    for index in range(sessions):
        record = _record(
            f"{index:06d}-{uuid.uuid4().hex[:8]}",
            working_dir=f"/ws/project-{index % 20}",
            status="ended" if index % 4 == 0 else "idle",
        )
        day = f"2025-{1 + index % 12:02d}-{1 + index % 28:02d}"
        stamp = f"{day}T{index % 24:02d}:00:00.{index % 1000:03d}Z"
        record = record.model_copy(
            update={"updated_at": stamp, "title": f"Session about topic {index % 500}"}
        )
        rows.append(record)
    connection.execute("BEGIN IMMEDIATE")
    for record in rows:
        connection.execute(
            "INSERT INTO agent_sessions (id, agent_slug, agent_snapshot, title, context,"
            " working_dir, status, source, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.id,
                record.agent_slug,
                compact_json(record.agent_snapshot),
                record.title,
                compact_json(record.context.model_dump(mode="json", by_alias=True)),
                record.context.working_dir,
                record.status,
                compact_json(record.source.to_wire()),
                record.created_at,
                record.updated_at,
            ),
        )
    connection.execute("COMMIT")

    def deep_page() -> None:
        cursor = None
        for _ in range(20):
            cursor = store.list_sessions(limit=50, cursor=cursor).next_cursor

    cases: list[tuple[str, Callable[[], object], int]] = [
        ("first page (50)", lambda: store.list_sessions(limit=50), 1),
        (
            "workspace+status",
            lambda: store.list_sessions(workspace="/ws/project-3", status="idle"),
            1,
        ),
        ("title query", lambda: store.list_sessions(query="topic 42"), 1),
        ("pages 1..20 (cursor)", deep_page, 20),
    ]
    produced = []
    for label, fn, pages in cases:
        samples = _timed(fn, repeat)
        per_page = _percentile(samples, 0.5) / pages
        print(f"{label:22} {_ms(_percentile(samples, 0.5))}  ({_ms(per_page).strip()} per page)")
        produced.append(
            Row(f"list_sessions over {sessions:,}: {label}, p50 per page", per_page * 1000, "ms")
        )
    store.close()
    return produced


def rows(quick: bool) -> list[Row]:
    """Append, resume, search and listing rows; ``quick`` shrinks the fixtures."""
    sizes = [100, 1_000, 10_000] if quick else [100, 10_000, 100_000]
    with tempfile.TemporaryDirectory(prefix="relavium-bench-") as temp:
        directory = Path(temp)
        produced = bench_append(directory, 300 if quick else 2_000)
        produced += bench_tail_and_fts(directory, sizes, repeat=30 if quick else 100)
        produced += bench_list(directory, 1_000 if quick else 10_000, repeat=10 if quick else 50)
    return produced


def main() -> None:
    """Run the benchmark and print its rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller fixtures (smoke run)")
    print_rows(rows(parser.parse_args().quick))


if __name__ == "__main__":
    main()
