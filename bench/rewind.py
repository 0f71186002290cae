"""Checkpoint and rewind of a turn that changed 100 files of 10 KB (issue 19).

Run: ``python -m bench.rewind [--quick]``. A real encrypted store on disk; the editor is an
in-memory host that computes the ranged edits the LSP host would send (``minimal_edits``), so
the rows are the server's time, not an editor's or a disk's.

- snapshot: the turn's 100 ``before_change`` notes and the journal's ``commit`` (every
  file's text as a blob and a checkpoint row, in one transaction on the store's worker
  thread) — goal ≤ 50 ms in all.
- restore: ``rewind`` of that turn, files only: load the blobs, compare every file with what
  the agent left, build each file's edit, record the rewind (and the texts it replaced) —
  goal ≤ 200 ms.
- database growth per changed byte: the database file after the snapshot (write-ahead log
  folded in) against before it, over the 1 MB the turn changed — goal ≤ 1.3x.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from bench.report import Goal, Row, print_rows
from relavium_lsp.contracts.content import TextPart
from relavium_lsp.contracts.session import AgentSessionRecord, SessionContext
from relavium_lsp.engine.events.bus import EventBus
from relavium_lsp.engine.history.checkpoint_journal import TurnJournal
from relavium_lsp.engine.history.rewind import rewind
from relavium_lsp.engine.scope import EngineServices
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.media import MediaStore
from relavium_lsp.store.models import utc_timestamp
from relavium_lsp.store.rows.file_checkpoints import record_before
from relavium_lsp.tools.host import ApprovalRequest, WriteOutcome
from relavium_lsp.tools.jail import ScopeRoots
from relavium_lsp.tools.registry import default_registry
from relavium_lsp.tools.text_edit import minimal_edits

FILES = 100
FILE_BYTES = 10 * 1024


class MemoryEditor:
    """An editor whose buffers are a dict; writes compute the LSP host's ranged edits."""

    def __init__(self) -> None:
        self.buffers: dict[Path, str] = {}
        self.edits = 0

    async def read_open_buffer(self, path: Path) -> str | None:
        return self.buffers.get(path)

    def write_refusal(self, *, creating: bool) -> str | None:
        return None

    async def write_file(self, path: Path, text: str, *, label: str) -> WriteOutcome:
        self.edits += len(minimal_edits(self.buffers.get(path, ""), text))
        self.buffers[path] = text
        return WriteOutcome(applied=True)

    async def delete_file(self, path: Path, *, label: str) -> WriteOutcome:
        self.buffers.pop(path, None)
        return WriteOutcome(applied=True)

    async def request_approval(self, request: ApprovalRequest) -> str:
        return "approve"


def _corpus() -> str:
    """Real source text to cut files from: this package's own modules."""
    package = Path(__file__).resolve().parents[1] / "relavium_lsp"
    return "".join(path.read_text(encoding="utf-8") for path in sorted(package.rglob("*.py")))


_CORPUS = _corpus()


def _text(rng: random.Random) -> str:
    """FILE_BYTES of real source from a random place, tagged so no two files are equal."""
    start = rng.randrange(0, len(_CORPUS) - FILE_BYTES)
    return f"# {rng.random()}\n" + _CORPUS[start : start + FILE_BYTES]


def _changed(text: str, rng: random.Random) -> str:
    """The agent's edit: a few lines replaced in the middle of the file."""
    lines = text.splitlines(keepends=True)
    middle = len(lines) // 2
    lines[middle : middle + 3] = [f"changed line {rng.random()}\n" for _ in range(3)]
    return "".join(lines)


def _record(working_dir: Path) -> AgentSessionRecord:
    now = utc_timestamp()
    return AgentSessionRecord.model_validate(
        {
            "id": str(uuid.uuid4()),
            "agentSlug": "relavium-default",
            "agentSnapshot": {"id": "relavium-default"},
            "context": SessionContext(working_dir=str(working_dir)),
            "status": "idle",
            "createdAt": now,
            "updatedAt": now,
        }
    )


def _database_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


async def _one_turn(
    store: AsyncSessionStore, services: EngineServices, workspace: Path, seed: int
) -> tuple[float, float, float]:
    """(snapshot seconds, restore seconds, database growth per changed byte)."""
    rng = random.Random(seed)
    editor = services.host
    assert isinstance(editor, MemoryEditor)
    record = _record(workspace)
    await store.run(lambda s: s.create_session(record))
    user, _ = await store.run(lambda s: s.begin_turn(record.id, [TextPart(text="change")]))
    paths = [workspace / f"pkg{seed}" / f"module_{n:03}.py" for n in range(FILES)]
    before = {path: _text(rng) for path in paths}
    after = {path: _changed(text, rng) for path, text in before.items()}
    editor.buffers.update(before)
    await store.run(lambda s: s.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())
    size_before = _database_bytes(database_path(store))

    journal = TurnJournal(store, record.id, user.sequence_number)
    started = time.perf_counter()
    for path in paths:
        journal.before_change(path, before[path])
    await journal.commit()
    snapshot = time.perf_counter() - started
    for path in paths:
        await editor.write_file(path, after[path], label="bench")
        journal.after_change(path, after[path])
    await journal.commit()

    await store.run(lambda s: s.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())
    changed_bytes = sum(len(text.encode()) for text in before.values())
    growth = (_database_bytes(database_path(store)) - size_before) / changed_bytes

    started = time.perf_counter()
    roots = ScopeRoots.build(record.context.working_dir, "workspace", services.temp_dir)
    result = await rewind(
        services,
        record,
        user.sequence_number,
        files=True,
        conversation=False,
        host=editor,
        roots=roots,
    )
    restore = time.perf_counter() - started
    if len(result.restored) != FILES or any(editor.buffers[p] != before[p] for p in paths):
        raise RuntimeError(f"the rewind did not restore every file: {result}")
    return snapshot, restore, growth


async def _per_file_commits(store: AsyncSessionStore, workspace: Path, seed: int) -> float:
    """The anchor: the same snapshot with one commit per file (how it was before batching)."""
    rng = random.Random(seed + 1_000_000)  # other texts: nothing deduplicated against the turn
    record = _record(workspace)
    await store.run(lambda s: s.create_session(record))
    user, _ = await store.run(lambda s: s.begin_turn(record.id, [TextPart(text="change")]))
    sequence = user.sequence_number
    texts = {str(workspace / f"old{seed}" / f"module_{n:03}.py"): _text(rng) for n in range(FILES)}
    started = time.perf_counter()
    for path, text in texts.items():
        await store.run(
            lambda s, p=path, t=text: record_before(s.connection, record.id, sequence, p, t)
        )
    return time.perf_counter() - started


_DATABASES: dict[int, Path] = {}


def database_path(store: AsyncSessionStore) -> Path:
    return _DATABASES[id(store)]


async def _run(directory: Path, turns: int) -> list[Row]:
    path = directory / "history.db"
    store = await AsyncSessionStore.open(path, DbKey(os.urandom(32), "env"))
    _DATABASES[id(store)] = path
    try:
        services = EngineServices(
            store=store,
            bus=EventBus(store),
            media=MediaStore(directory / "media"),
            tools=default_registry(),
            host=MemoryEditor(),
            temp_dir=directory,
        )
        results = []
        anchors = []
        for seed in range(turns):
            results.append(await _one_turn(store, services, directory / "ws", seed))
            anchors.append(await _per_file_commits(store, directory / "ws", seed))
    finally:
        await store.close()
    snapshot = statistics.median(r[0] for r in results)
    per_file = statistics.median(anchors)
    restore = statistics.median(r[1] for r in results)
    growth = statistics.median(r[2] for r in results)
    note = f"median of {turns} turns; {FILES} files x {FILE_BYTES // 1024} KB"
    return [
        Row(
            measure=f"checkpoint snapshot, {FILES} files x 10 KB",
            value=snapshot * 1000,
            unit="ms",
            anchor="one commit per file",
            anchor_value=per_file * 1000,
            goal=Goal(limit=50, on="value"),
            note=note + "; one transaction on the store thread (anchor: the previous way)",
        ),
        Row(
            measure=f"rewind restore, {FILES} files x 10 KB",
            value=restore * 1000,
            unit="ms",
            goal=Goal(limit=200, on="value"),
            note=note + "; server time (edits computed, editor in memory)",
        ),
        Row(
            measure="checkpoint DB growth per changed byte",
            value=growth,
            unit="x",
            goal=Goal(limit=1.3, on="value"),
            note="database file after the snapshot vs before, WAL folded in",
        ),
    ]


def rows(quick: bool) -> list[Row]:
    """Snapshot, restore and growth rows; ``quick`` measures fewer turns."""
    with tempfile.TemporaryDirectory(prefix="relavium-bench-") as temp:
        return asyncio.run(_run(Path(temp), 3 if quick else 10))


def main() -> None:
    """Run the benchmark and print its rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer turns (smoke run)")
    print_rows(rows(parser.parse_args().quick))


if __name__ == "__main__":
    main()
