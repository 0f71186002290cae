"""One "window" for test_windows_turns.py: an engine running many turns on a shared database.

``python windows_child.py DB WORKSPACE TURNS`` (key in ``RELAVIUM_DB_KEY``): prints
``ready``, waits for ``go`` on stdin (so both windows start together), runs ``TURNS`` turns in
a session of its own with every event subscribed (so the cross-process watcher runs too),
then prints ``session <id>``, ``seen <n>`` (events delivered to it) and ``done``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "unit" / "engine"))

from engine_harness import engine, scripted, text_reply

from relavium_lsp.store.db.keys import KEY_ENV, DbKey


async def main(db: Path, workspace_root: Path, turns: int) -> None:
    key = DbKey(bytes.fromhex(os.environ[KEY_ENV]), "env")
    provider = scripted(*(text_reply(f"answer {n}") for n in range(turns)))
    toml = f"[chat]\nmax_turns = {turns + 1}\n"
    async with engine(workspace_root, provider, db_path=db, key=key, user_toml=toml) as h:
        session = (await h.start()).record.id
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        for n in range(turns):
            result = await h.engine.send(session, f"question {n}")
            assert result.stop_reason == "stop", result
        await h.engine.flush_events(session)
        print(f"session {session}", flush=True)
        print(f"seen {len(h.events)}", flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])))
