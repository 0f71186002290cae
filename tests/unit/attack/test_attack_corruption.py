"""Attack: a damaged history database (issue 16 item 3).

Real encrypted files damaged the way disks and people damage them — garbage over a page, a
truncation — opened by the store, by a real server process and by the CLI. Damage is told
from a wrong key and names the file; sessions in undamaged parts still open (a damaged event
log does not lock them out); ``doctor --check`` lists what is damaged and ``recover`` copies
every readable session into a fresh database, keeping the damaged file.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import sqlcipher3

from relavium_lsp.contracts.content import TextPart
from relavium_lsp.contracts.events import TurnStarted
from relavium_lsp.errors import DatabaseCorrupted, DatabaseKeyError
from relavium_lsp.server import methods
from relavium_lsp.store.db.connection import write_transaction
from relavium_lsp.store.db.damage import PAGE_SIZE
from relavium_lsp.store.db.keys import KEY_ENV, DbKey
from relavium_lsp.store.rows import event_log
from relavium_lsp.store.rows.workspace_memory import read_memory, write_memory
from relavium_lsp.store.salvage import recover_history, scan_history
from relavium_lsp.store.sessions import SessionStore
from tests.unit.attack.raw_server import RawServer, server_env
from tests.unit.store.store_records import make_record

KEY = DbKey(bytes(range(32)), "env", KEY_ENV)


def _pages(path: Path) -> int:
    return path.stat().st_size // PAGE_SIZE


def _checkpoint(store: SessionStore) -> None:
    store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def _garbage(path: Path, page: int, *, keep_salt: bool = False) -> None:
    start = (page - 1) * PAGE_SIZE + (16 if keep_salt and page == 1 else 0)
    with path.open("r+b") as handle:
        handle.seek(start)
        handle.write(random.Random(page).randbytes((page * PAGE_SIZE) - start))


def _root_page(path: Path, table: str) -> int:
    connection = sqlcipher3.connect(str(path))
    try:
        connection.execute(f"PRAGMA key = {KEY.sqlcipher_pragma_value()}")
        row = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
        ).fetchone()
        return int(row[0])
    finally:
        connection.close()


def build_history(path: Path, workspace: Path) -> tuple[list[str], int]:
    """Sessions A, B (one 200 KB message) and C, with events: their ids and a page of B's.

    Damages nothing. B's overflow pages are the pages the file grew by while B was written,
    so garbage in the middle of that range hits B's transcript only.
    """
    store = SessionStore.open(path, KEY)
    ids = []
    try:
        for name in ("a", "b", "c"):
            record = make_record(working_dir=str(workspace), title=f"session {name}")
            store.create_session(record)
            ids.append(record.id)
            before = _pages(path)
            text = "x" * 200_000 if name == "b" else f"hello from {name}"
            store.append_message(record.id, "user", [TextPart(text=text)])
            store.append_message(record.id, "assistant", [TextPart(text=f"answer {name}")])
            store.append_events(record.id, [TurnStarted(user_message_sequence=1)] * 3)
            _checkpoint(store)
            if name == "b":
                b_range = (before, _pages(path))
    finally:
        store.close()
    return ids, (b_range[0] + b_range[1]) // 2


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, Path, list[str], int]:
    """A home with a history database; returns (home, workspace, ids, a page inside B)."""
    home = tmp_path / "home"
    (home / ".relavium").mkdir(parents=True, mode=0o700)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    path = home / ".relavium" / "history.db"
    ids, page_in_b = build_history(path, workspace)
    return home, workspace, ids, page_in_b


def test_a_wrong_key_is_still_a_wrong_key(history: tuple[Path, Path, list[str], int]) -> None:
    home = history[0]
    with pytest.raises(DatabaseKeyError):
        SessionStore.open(home / ".relavium" / "history.db", DbKey(secrets.token_bytes(32), "env"))


@pytest.mark.parametrize("how", ["truncated at a page", "truncated mid-page", "first page"])
def test_damage_at_open_is_corruption_naming_the_file(
    history: tuple[Path, Path, list[str], int], how: str
) -> None:
    path = history[0] / ".relavium" / "history.db"
    if how == "truncated at a page":
        os.truncate(path, 4 * PAGE_SIZE)
    elif how == "truncated mid-page":
        os.truncate(path, 4 * PAGE_SIZE + 100)
    else:
        _garbage(path, 1, keep_salt=True)
    with pytest.raises(DatabaseCorrupted) as raised:
        SessionStore.open(path, KEY)
    assert str(path) in raised.value.message
    assert "damaged" in raised.value.message
    assert not isinstance(raised.value, DatabaseKeyError)


def test_a_damaged_event_log_does_not_lock_sessions_out(
    history: tuple[Path, Path, list[str], int],
) -> None:
    home, workspace, ids, _ = history
    path = home / ".relavium" / "history.db"
    _garbage(path, _root_page(path, "session_events"))
    server = RawServer.start(home, workspace, env={KEY_ENV: KEY.raw.hex()})
    try:
        resumed = server.call(methods.RESUME_SESSION, {"sessionId": ids[0]})
        assert "result" in resumed, resumed
        texts = [m["content"][0]["text"] for m in resumed["result"]["messages"]]
        assert texts == ["hello from a", "answer a"]
        events = server.call(methods.SESSION_EVENTS, {"sessionId": ids[2], "afterSequence": 0})
        message = events["error"]["message"]
        assert str(path) in message and "damaged" in message and "recover" in message
        # Intact sessions keep opening after the connection met the damage.
        again = server.call(methods.RESUME_SESSION, {"sessionId": ids[2]})
        assert "result" in again, again
        started = server.call(methods.START_SESSION, {"context": {"workingDir": str(workspace)}})
        assert "result" in started, started
    finally:
        assert server.stop() == 0
    assert "Traceback" not in server.stderr_text()


def test_doctor_check_and_recover_keep_every_readable_session(
    history: tuple[Path, Path, list[str], int],
) -> None:
    home, _, ids, page_in_b = history
    path = home / ".relavium" / "history.db"
    env = server_env(home, {KEY_ENV: KEY.raw.hex()})
    healthy = _cli(env, "doctor", "--check", "--json")
    assert healthy.returncode == 0, healthy.stdout
    _garbage(path, page_in_b)

    checked = _cli(env, "doctor", "--check", "--json")
    assert checked.returncode == 1
    report = json.loads(checked.stdout)
    assert report["ok"] is False
    assert list(report["unreadable"]) == [ids[1]]
    assert report["readable"] == [ids[0], ids[2]]

    recovered = _cli(env, "recover")
    assert recovered.returncode == 1  # one session was lost, and it says which
    assert f"lost: session {ids[1]}" in recovered.stdout
    assert "recovered 2 session(s)" in recovered.stdout
    kept = [p for p in path.parent.iterdir() if p.name.startswith("history.db.damaged-")]
    assert len(kept) == 1

    scan = scan_history(path, KEY)
    assert scan.healthy
    assert [record.id for record, _ in scan.readable] == [ids[0], ids[2]]
    assert [m.content[0].text for m in scan.readable[0][1]] == [  # type: ignore[union-attr]
        "hello from a",
        "answer a",
    ]
    assert _cli(env, "doctor", "--check").returncode == 0


def test_recovering_a_healthy_file_loses_nothing(
    history: tuple[Path, Path, list[str], int],
) -> None:
    path = history[0] / ".relavium" / "history.db"
    store = SessionStore.open(path, KEY)
    try:
        write_memory(
            store.connection, "/w", "## Build\n- make test\n", base_revision=0, source="user"
        )
        write_memory(
            store.connection, "/w", "## Build\n- make unit\n", base_revision=1, source="user"
        )
    finally:
        store.close()
    recovery = recover_history(path, KEY)
    assert recovery.copied == 3 and recovery.scan.healthy
    assert recovery.kept_damaged.exists()
    store = SessionStore.open(path, KEY)
    try:
        memory = read_memory(store.connection, "/w")
        assert (memory.text, memory.revision) == ("## Build\n- make unit\n", 1)
    finally:
        store.close()


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "relavium_lsp", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_check_and_recover_never_invent_a_key(history: tuple[Path, Path, list[str], int]) -> None:
    home = history[0]
    env = server_env(home, {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"})
    for command in (("doctor", "--check"), ("recover",)):
        done = _cli(env, *command)
        assert done.returncode == 1
        assert "no key was found" in done.stdout
    assert not (home / ".relavium" / "history.key").exists()
    assert [p.name for p in (home / ".relavium").iterdir()] == ["history.db"]


def test_recovery_never_hands_out_an_event_number_again(
    history: tuple[Path, Path, list[str], int],
) -> None:
    """Event logs are not copied, but the numbers they used stay used (editors saw them)."""
    path = history[0] / ".relavium" / "history.db"
    ids = history[2]
    store = SessionStore.open(path, KEY)
    try:
        # A takeover's floor above the log (a dead owner delivered numbers it never wrote).
        with write_transaction(store.connection):
            event_log.raise_floor(store.connection, ids[2], 40)
    finally:
        store.close()
    recovery = recover_history(path, KEY)
    assert recovery.scan.event_floors == {ids[0]: 3, ids[1]: 3, ids[2]: 40}
    store = SessionStore.open(path, KEY)
    try:
        numbered = {
            session_id: [
                e.sequence_number
                for e in store.append_events(session_id, [TurnStarted(user_message_sequence=1)])
            ]
            for session_id in ids
        }
    finally:
        store.close()
    assert numbered == {ids[0]: [4], ids[1]: [4], ids[2]: [41]}
