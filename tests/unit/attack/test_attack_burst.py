"""Attack: a burst of 10,000 bad requests (issue 16 item 8), against a real server.

Each is answered (or, for a notification, ignored) as the protocol says, and logged as at
most one INFO line without a traceback: stderr — the editor's output panel — stays quiet, the
rotating log stays within its bound, and the process's memory returns to within 20 % of what
it was after a warm-up (nothing per request is kept).
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from relavium_lsp.logs import LOG_BACKUPS, MAX_LOG_BYTES
from relavium_lsp.server import methods
from tests.unit.attack.raw_server import RawServer, frame, request

BURST = 10_000
BATCH = 500
BIG = "x" * 20_000


def bad_message(index: int) -> dict[str, Any]:
    """One of ten kinds of bad request (or notification), some of them large."""
    kind = index % 10
    session = str(uuid.UUID(int=index))
    if kind == 0:
        return request(index, methods.START_SESSION, {"agentRef": 42, "title": BIG})
    if kind == 1:
        return request(index, "relavium/noSuchMethod", {})
    if kind == 2:
        return request(index, methods.SEND_MESSAGE, {"sessionId": session, "text": BIG})
    if kind == 3:
        return request(index, methods.GET_TRANSCRIPT, {"sessionId": session})
    if kind == 4:
        return request(index, methods.LIST_SESSIONS)  # no params at all
    if kind == 5:
        return request(index, "textDocument/hover", {"textDocument": 5})
    if kind == 6:
        return {"jsonrpc": "2.0", "method": methods.EDITOR_STATE, "params": {"uri": 5}}
    if kind == 7:
        return request(index, "workspace/executeCommand", {"command": "relavium.nope"})
    if kind == 8:
        return request(index, methods.RESUME_SESSION, {"sessionId": "x" * 300})
    return request(index, methods.START_SESSION, {"context": {"workingDir": "/not/here"}})


def resident_mib(pid: int) -> float:
    """The process's resident set size (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS line")


def send_burst(server: RawServer, first: int, count: int) -> None:
    """Send ``count`` bad messages in pipelined batches, each batch followed by a ping."""
    for start in range(first, first + count, BATCH):
        server.send(b"".join(frame(bad_message(i)) for i in range(start, start + BATCH)))
        assert server.ping()["error"]["code"] == -32601


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for RSS")
def test_a_burst_of_bad_requests_stays_quiet_bounded_and_forgets(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    server = RawServer.start(tmp_path, workspace)
    server._next_id = 50_000_000  # pings stay clear of the burst's ids
    try:
        # Warm-up: every feature loaded, the engine open, allocator arenas in use.
        send_burst(server, 1_000_000, 2 * BATCH)
        baseline = resident_mib(server.process.pid)
        stderr_before = server.stderr_path.stat().st_size

        send_burst(server, 0, BURST)
        # Every request got its answer (the ids of the last batch, spot-checked).
        last = BURST - BATCH
        for index in range(last, BURST):
            if index % 10 != 6:  # 6 is a notification: nothing to answer
                assert "error" in server.answer(index), index

        after = resident_mib(server.process.pid)
        stderr_growth = server.stderr_path.stat().st_size - stderr_before
        logs = list(server.log_path.parent.iterdir())
        log_bytes = sum(path.stat().st_size for path in logs)
        log_text = server.log_text()
    finally:
        exit_code = server.stop()
        stderr = server.stderr_text()

    assert exit_code == 0, stderr[-2000:]
    assert after <= baseline * 1.2, f"RSS {baseline:.0f} MiB → {after:.0f} MiB"
    assert stderr_growth == 0, stderr[-2000:]
    assert log_bytes <= (LOG_BACKUPS + 1) * MAX_LOG_BYTES + 64_000
    assert len(logs) <= LOG_BACKUPS + 1
    assert "Traceback" not in log_text
    assert BIG not in log_text
