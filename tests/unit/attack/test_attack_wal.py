"""Attack: the write-ahead log deleted under a running server, then a kill (issue 16 item 4).

Without a guard SQLite keeps writing into the deleted log and a kill loses every commit not
yet checkpointed, silently. The server must notice, warn, checkpoint at once and reopen, so
the acknowledged session survives the kill.
"""

from __future__ import annotations

import signal
from pathlib import Path

from relavium_lsp.server import methods
from relavium_lsp.store.db.keys import KEY_ENV
from tests.unit.attack.raw_server import RawServer

KEY_HEX = bytes(range(32)).hex()


def _start(home: Path, workspace: Path) -> RawServer:
    return RawServer.start(home, workspace, env={KEY_ENV: KEY_HEX})


def test_a_deleted_wal_is_noticed_and_nothing_acknowledged_is_lost(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "workspace"
    home.mkdir()
    workspace.mkdir()
    server = _start(home, workspace)
    wal = home / ".relavium" / "history.db-wal"
    try:
        first = server.call(methods.START_SESSION, {"context": {"workingDir": str(workspace)}})
        assert "result" in first, first
        assert wal.exists()
        wal.unlink()
        # Any store call (here the next request) notices; an idle server notices on its own
        # within a second (the watch), which this test does not wait for.
        second = server.call(methods.START_SESSION, {"context": {"workingDir": str(workspace)}})
        assert "result" in second, second
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
    finally:
        server.stop()
    again = _start(home, workspace)
    try:
        listed = again.call(methods.LIST_SESSIONS, {})
        ids = {session["id"] for session in listed["result"]["sessions"]}
        assert {first["result"]["sessionId"], second["result"]["sessionId"]} <= ids
    finally:
        again.stop()
    log = server.log_text()
    assert "write-ahead log" in log and "was deleted" in log
