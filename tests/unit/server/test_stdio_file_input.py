"""A real ``relavium-lsp serve`` reading stdin from a regular file (the thread fallback) or a pipe.

Editors give the server a pipe, which the event loop watches; a file (``serve < session.txt``,
a replayed transcript) cannot be watched (``epoll`` refuses regular files) and is read on a
thread instead. Both must serve the same conversation and exit the same way.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.unit.attack.raw_server import EXIT_DEADLINE_S, RawServer, frame, request, server_env


def framed_messages(output: bytes) -> list[dict[str, Any]]:
    """Every message in a stream of correctly framed LSP output."""
    messages = []
    while output:
        header, _, rest = output.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in header.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        messages.append(json.loads(rest[:length]))
        output = rest[length:]
    return messages


def test_a_session_read_from_a_file_is_served_and_exits_cleanly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    session = tmp_path / "session.lsp"
    session.write_bytes(
        frame(request(1, "initialize", {"processId": None, "capabilities": {}, "rootUri": None}))
        + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        + frame(request(2, "$/relavium-attack/ping", {}))
        + frame(request(3, "shutdown"))
        + frame({"jsonrpc": "2.0", "method": "exit"})
    )
    with session.open("rb") as stdin:
        completed = subprocess.run(
            [sys.executable, "-m", "relavium_lsp", "serve"],
            stdin=stdin,
            capture_output=True,
            env=server_env(home),
            cwd=str(home),
            timeout=EXIT_DEADLINE_S,
            check=False,
        )
    # 0: exit came after shutdown (a file cannot wait for shutdown's answer as a client does,
    # so exit may end the process before the asynchronous shutdown handler answers).
    assert completed.returncode == 0, completed.stderr.decode(errors="replace")[-3000:]
    answers = {
        message["id"]: message
        for message in framed_messages(completed.stdout)
        if "id" in message and "method" not in message
    }
    assert "capabilities" in answers[1]["result"]
    assert answers[2]["error"]["code"] == -32601  # method not found: answered all the same
    log = (home / ".relavium" / "logs" / "relavium-lsp.log").read_text(errors="replace")
    assert "the event loop cannot watch the client's input" in log
    assert "Fatal Python error" not in completed.stderr.decode(errors="replace")


def test_a_pipe_is_watched_by_the_event_loop(tmp_path: Path) -> None:
    server = RawServer.start(tmp_path)
    assert server.ping()["error"]["code"] == -32601
    assert server.stop() == 0
    assert "the event loop cannot watch the client's input" not in server.log_text()
    assert "Fatal Python error" not in server.stderr_text()
