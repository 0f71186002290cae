"""A process that keeps checkpointing files until it is killed (run as a script, by path).

Usage: checkpoint_child_writer.py DB SESSION BATCH. The key comes from RELAVIUM_DB_KEY.
Prints ``ready``, then for ever: tells the journal the earlier text of the next BATCH files,
commits, prints ``c <files committed so far>`` (only after the commit returned), tells each
file's new text and queues that write without waiting — like a tool between two edits.
File ``n`` is ``/w/file-<n>`` and its texts are :func:`before_text` and :func:`after_text`.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from relavium_lsp.engine.history.checkpoint_journal import TurnJournal
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.db.keys import resolve_db_key

TURN = 1


def file_path(n: int) -> Path:
    return Path(f"/w/file-{n}")


def before_text(n: int) -> str:
    return f"file {n} before\n" * 600  # about 10 KB


def after_text(n: int) -> str:
    return f"file {n} after\n" * 600


async def main() -> int:
    db, session_id, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    path = Path(db)
    store = await AsyncSessionStore.open(path, resolve_db_key(path.parent))
    journal = TurnJournal(store, session_id, TURN)
    print("ready", flush=True)
    done = 0
    while True:
        for n in range(done, done + batch):
            journal.before_change(file_path(n), before_text(n))
        await journal.commit()
        done += batch
        print(f"c {done}", flush=True)
        for n in range(done - batch, done):
            journal.after_change(file_path(n), after_text(n))
        journal.commit_later()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
