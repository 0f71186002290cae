"""Real processes sharing one encrypted database: no lost, duplicate or skipped numbers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from store_records import make_record

from relavium_lsp.store.db.keys import KEY_ENV, DbKey
from relavium_lsp.store.db.migrations import MIGRATIONS
from relavium_lsp.store.sessions import SessionStore

WRITER = Path(__file__).with_name("store_child_writer.py")


def _spawn(db_path: Path, key: DbKey, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env[KEY_ENV] = key.raw.hex()
    child = subprocess.Popen(
        [sys.executable, str(WRITER), str(db_path), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip() == "ready", (line, child.stderr.read() if child.stderr else "")
    return child


def _go(*children: subprocess.Popen[str]) -> None:
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()


def _parse(output: str) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    messages: dict[str, list[int]] = defaultdict(list)
    events: dict[str, list[int]] = defaultdict(list)
    for line in output.splitlines():
        if line == "done":
            continue
        kind, session_id, *numbers = line.split()
        if kind == "m":
            messages[session_id].append(int(numbers[0]))
        elif kind == "e":
            events[session_id].extend(int(number) for number in numbers)
    return messages, events


def _stored_sequences(store: SessionStore, session_id: str) -> list[int]:
    return [message.sequence_number for message in store.iter_messages(session_id)]


def test_two_processes_share_sessions_without_collisions(db_path: Path, db_key: DbKey) -> None:
    store = SessionStore.open(db_path, db_key)
    shared, own_a, own_b = make_record("shared"), make_record("own-a"), make_record("own-b")
    for record in (shared, own_a, own_b):
        store.create_session(record)
    children = [
        _spawn(db_path, db_key, "shared", "own-a", "1000", "40"),
        _spawn(db_path, db_key, "shared", "own-b", "1000", "40"),
    ]
    _go(*children)
    results = [child.communicate(timeout=240) for child in children]
    for child, (_, stderr) in zip(children, results, strict=True):
        assert child.returncode == 0, stderr
    assert all(stdout.endswith("done\n") for stdout, _ in results)
    # Both writers start together and run concurrently; how their commits interleave is up
    # to SQLite's (unfair) lock, so only the outcome is asserted, never an interleaving.
    parsed = [_parse(stdout) for stdout, _ in results]

    # the shared session: 2,000 messages numbered 1..2000, each number reported by one writer
    reported_a, reported_b = (p[0]["shared"] for p in parsed)
    assert len(reported_a) == len(reported_b) == 1000
    assert set(reported_a).isdisjoint(reported_b)
    assert sorted(reported_a + reported_b) == list(range(1, 2001))
    assert reported_a == sorted(reported_a) and reported_b == sorted(reported_b)
    assert _stored_sequences(store, "shared") == list(range(1, 2001))
    record = store.get_session("shared")
    assert record is not None and record.message_count == 2000

    # each process's own session: 1..1000 exactly
    for own, (messages, _) in (("own-a", parsed[0]), ("own-b", parsed[1])):
        assert messages[own] == list(range(1, 1001))
        assert _stored_sequences(store, own) == list(range(1, 1001))

    # events appended in batches by both: gapless, disjoint, all stored
    events_a, events_b = (p[1]["shared"] for p in parsed)
    assert len(events_a) == len(events_b) == 300
    assert sorted(events_a + events_b) == list(range(1, 601))
    stored_events = store.events_after("shared", 0, limit=10_000)
    assert [event.sequence_number for event in stored_events] == list(range(1, 601))
    assert store.count_tokens_since_boundary("shared")[0] == 2000
    assert store.check_integrity() == ["ok"]
    store.close()


def test_sigkill_mid_stream_loses_nothing_committed(db_path: Path, db_key: DbKey) -> None:
    store = SessionStore.open(db_path, db_key)
    store.create_session(make_record("victim"))
    store.close()
    child = _spawn(db_path, db_key, "-", "victim", "0", "4000")
    _go(child)
    assert child.stdout is not None
    reported: list[int] = []
    while len(reported) < 400:
        line = child.stdout.readline()
        assert line, child.stderr.read() if child.stderr else "writer exited early"
        kind, _, number = line.split()
        assert kind == "m"
        reported.append(int(number))
    os.kill(child.pid, signal.SIGKILL)
    # Read the rest through the same text stream: readline() may already hold lines it read
    # ahead, which communicate() (it reads the raw pipe) would never see.
    with child:  # closes the pipes and waits
        rest = child.stdout.read()
    assert child.returncode == -signal.SIGKILL
    reported.extend(_parse(rest)[0]["victim"])

    reopened = SessionStore.open(db_path, db_key)
    assert reopened.check_integrity() == ["ok"]
    stored = _stored_sequences(reopened, "victim")
    assert set(reported) <= set(stored), "a committed message went missing"
    # nothing skipped, and at most the one message whose print the kill cut off is extra
    assert stored == list(range(1, len(stored) + 1))
    assert len(stored) - len(reported) <= 1
    record = reopened.get_session("victim")
    assert record is not None and record.message_count == len(stored)
    following = reopened.append_message("victim", "user", [])
    assert following.sequence_number == len(stored) + 1
    reopened.close()


_FIRST_OPEN = """
import sys
from pathlib import Path
from relavium_lsp.contracts.content import TextPart
from relavium_lsp.store.db.keys import resolve_db_key
from relavium_lsp.store.sessions import SessionStore
sys.path.insert(0, sys.argv[3])
from store_records import make_record
print("ready", flush=True)
sys.stdin.readline()
path = Path(sys.argv[1])
store = SessionStore.open(path, resolve_db_key(path.parent))
record = make_record(sys.argv[2])
store.create_session(record)
store.append_message(record.id, "user", [TextPart(text="first words")])
store.close()
print("ok", flush=True)
"""


def test_processes_racing_to_create_a_fresh_database(tmp_path: Path, db_key: DbKey) -> None:
    db_path = tmp_path / "not-yet" / "created" / "history.db"
    env = dict(os.environ)
    env[KEY_ENV] = db_key.raw.hex()
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _FIRST_OPEN, str(db_path), f"racer-{n}", str(WRITER.parent)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for n in range(4)
    ]
    for child in children:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
    _go(*children)
    results = [child.communicate(timeout=120) for child in children]
    assert all(stdout.strip() == "ok" for stdout, _ in results), results
    store = SessionStore.open(db_path, db_key)
    assert store.check_integrity() == ["ok"]
    assert sorted(s.id for s in store.list_sessions().sessions) == [f"racer-{n}" for n in range(4)]
    versions = store.connection.execute("SELECT version FROM schema_migrations").fetchall()
    # Each migration applied exactly once, however many processes raced to apply them.
    assert [row[0] for row in versions] == [migration.version for migration in MIGRATIONS]
    store.close()
