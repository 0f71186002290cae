"""Two engine processes ("windows") running turns at once on one database (issue 18).

Engine-level (no LSP): the child processes are the engine as every front end opens it, with
the cross-process watcher running; here among the e2e tests because it takes minutes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from relavium_lsp.store.db.keys import KEY_ENV, DbKey
from relavium_lsp.store.sessions import SessionStore

CHILD = Path(__file__).with_name("windows_child.py")
TURNS = 1000
DEADLINE_S = 900  # a loaded, shared machine; passing runs take a fraction of it


def _spawn(db: Path, key: DbKey, root: Path) -> subprocess.Popen[str]:
    root.mkdir(parents=True)
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(db), str(root), str(TURNS)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, KEY_ENV: key.raw.hex()},
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip() == "ready", (line, child.stderr.read() if child.stderr else "")
    return child


def test_two_windows_times_1000_turns_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    db = tmp_path / "home" / "history.db"
    key = DbKey(os.urandom(32), "env")
    children = [_spawn(db, key, tmp_path / f"window-{n}") for n in range(2)]
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    sessions = []
    for child in children:
        out, err = child.communicate(timeout=DEADLINE_S)
        assert child.returncode == 0, err[-3000:]
        lines = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
        sessions.append(lines["session"])
    store = SessionStore.open(db, key)
    try:
        for session_id in sessions:
            record = store.get_session(session_id)
            assert record is not None
            assert record.status == "idle" and record.turn_count == TURNS
            messages = list(store.iter_messages(session_id))
            assert [m.sequence_number for m in messages] == list(range(1, 2 * TURNS + 1))
            assert [m.role for m in messages] == ["user", "assistant"] * TURNS
            events = store.events_after(session_id, 0, 1_000_000)
            numbers = [event.sequence_number for event in events]
            assert numbers == list(range(1, len(numbers) + 1))  # gapless, no duplicates
            completed = [e for e in events if e.type == "session:turn_completed"]
            assert len(completed) == TURNS
            assert store.read_lease(session_id) is None
    finally:
        store.close()
