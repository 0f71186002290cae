"""Attack: LSP framing (issue 16 item 1), against a real server process.

Every case sends hostile bytes and then a valid request, which must be answered: the server
logs one line about the bad input and resynchronises on the next ``Content-Length`` header.
Cases run one after another on one server, so each also proves the earlier ones left it sane.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from relavium_lsp.server.framing import MAX_MESSAGE_BYTES
from tests.unit.attack.raw_server import RawServer, frame, request

PING = json.dumps(request(1, "$/relavium-attack/ping", {})).encode()
GARBAGE = random.Random(16).randbytes(1_000_000)

CASES: dict[str, bytes] = {
    "huge length": b"Content-Length: 99999999999\r\n\r\n" + PING,
    "2 GiB length": b"Content-Length: 2147483648\r\n\r\n{}",
    "just over the limit": b"Content-Length: %d\r\n\r\n{}" % (MAX_MESSAGE_BYTES + 1),
    "negative length": b"Content-Length: -5\r\n\r\n" + PING,
    "non-numeric length": b"Content-Length: abc\r\n\r\n" + PING,
    "plus sign": b"Content-Length: +2\r\n\r\n{}",
    "hex length": b"Content-Length: 0x2\r\n\r\n{}",
    "empty length": b"Content-Length:\r\n\r\n{}",
    "zero length": b"Content-Length: 0\r\n\r\n",
    "missing length": b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + PING,
    "too short": b"Content-Length: %d\r\n\r\n" % (len(PING) - 5) + PING,
    # Too long swallows the start of the next (valid) message's header: it must come back.
    "too long": b"Content-Length: %d\r\n\r\n" % (len(PING) + 12) + PING,
    "invalid UTF-8 header": b"Content-Length: 5\xff\xfe\r\n\r\n" + PING,
    "invalid UTF-8 header name": b"X-\xff\xfe: 1\r\n\r\n" + PING,
    "1 MB of binary": GARBAGE,
    "a header line without end": b"X-Long: " + b"A" * 200_000,
    "body that is not JSON": frame(b"this is not json at all, not even close"),
    "body that is not UTF-8": frame(b"\xff\xfe\xfd{}"),
    "JSON that is not an object": frame(b"[1, 2, 3]"),
    "JSON without jsonrpc": frame(b'{"id": 77, "method": "x"}'),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    """One server for every case: each case must leave it able to answer."""
    running = RawServer.start(tmp_path_factory.mktemp("framing-home"))
    yield running
    assert running.stop() == 0  # shutdown + exit still work, and nothing aborts at exit
    assert "Fatal Python error" not in running.stderr_text()


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_bad_framing_is_skipped_and_the_next_request_answered(server: RawServer, case: str) -> None:
    answer = server.call("$/relavium-attack/ping", {}, prefix=CASES[case])
    assert answer["error"]["code"] == -32601  # method not found: an answer all the same
    assert server.process.poll() is None


def test_lf_only_separators_are_accepted(server: RawServer) -> None:
    request_id = server.new_id()
    body = json.dumps(request(request_id, "$/relavium-attack/ping", {})).encode()
    server.send(b"Content-Length: %d\n\n" % len(body) + body)
    assert server.answer(request_id)["error"]["code"] == -32601


def test_a_request_of_the_wrong_shape_is_answered_with_one_log_line(server: RawServer) -> None:
    request_id = server.new_id()
    bad = request(request_id, "textDocument/hover", {"textDocument": 5, "position": "x"})
    server.send(frame(bad))
    answer = server.answer(request_id)
    assert answer["error"]["code"] in (-32602, -32603)
    assert server.ping()["error"]["code"] == -32601
    assert "Traceback" not in server.stderr_text()


def test_bad_framing_logs_one_clear_line_without_traceback(server: RawServer) -> None:
    server.call("$/relavium-attack/ping", {}, prefix=b"Content-Length: -1\r\n\r\n{}")
    log = server.log_text()
    lines = [line for line in log.splitlines() if "Content-Length '-1'" in line]
    assert len(lines) == 1, log[-3000:]
    assert "skipping to the next header" in lines[0]
    assert "Traceback" not in log
    assert "MemoryError" not in server.stderr_text()


def test_end_of_input_exits_cleanly_with_a_log_line(tmp_path: Path) -> None:
    server = RawServer.start(tmp_path)
    server.send(b'Content-Length: 500\r\n\r\n{"jsonrpc"')  # the body never completes
    assert server.close_stdin() in (0, 1)  # 1: pygls's "exit without shutdown" convention
    log = server.log_text()
    assert "input ended inside a message body" in log
    assert "closed the server's input" in log
