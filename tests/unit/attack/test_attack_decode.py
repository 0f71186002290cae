"""Attack: one malformed message must not end the process (issue 35 item 1).

The framing suite (``test_attack_framing.py``) proves the framer resynchronises; these cases
come *after* framing — a well-framed body the decoder or the dispatcher chokes on — and are
fed to real ``relavium-lsp serve`` and ``relavium-lsp acp`` processes over pipes. Every case
is followed by a valid request that must be answered; cases run one after another on one
process, so each also proves the earlier ones left it sane. A case whose bad message carries
a usable id must get its own error answer too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from relavium_lsp.json_guard import MAX_NESTING_DEPTH
from tests.unit.attack.raw_acp import RawAcpAgent, line
from tests.unit.attack.raw_server import RawServer, frame, request

DEEP_ARRAY = b"[" * 20_000 + b"]" * 20_000
DEEP_OBJECT = b'{"a":' * 20_000 + b"1" + b"}" * 20_000
JUST_TOO_DEEP = b"[" * (MAX_NESTING_DEPTH + 1) + b"]" * (MAX_NESTING_DEPTH + 1)
HOVER_OF_THE_WRONG_SHAPE = json.dumps(
    request(5, "textDocument/hover", {"textDocument": 5, "position": "x"})
).encode()


def deep_request(request_id: int, method: str) -> bytes:
    """A request whose params nest 20,000 levels deep: it has an id the server can answer."""
    head = b'{"jsonrpc":"2.0","id":%d,"method":"%s","params":{"x":' % (request_id, method.encode())
    return head + DEEP_ARRAY + b"}}"


# Bodies that are well framed, yet each once ended the server or could have.
LSP_BODIES: dict[str, bytes] = {
    # A Content-Length longer than its body swallows the next message's start: the body is a
    # message pygls cannot deserialise followed by extra bytes ("Extra data" outside a handler).
    "too long, first message undeserialisable": (
        b"Content-Length: %d\r\n\r\n" % (len(HOVER_OF_THE_WRONG_SHAPE) + 12)
        + HOVER_OF_THE_WRONG_SHAPE
    ),
    "deeply nested array": frame(DEEP_ARRAY),
    "deeply nested object": frame(DEEP_OBJECT),
    "one level past the bound": frame(JUST_TOO_DEEP),
    "deep nesting inside strings is text": frame(
        json.dumps(request(7, "$/relavium-attack/ignored", {"t": "[" * 50_000})).encode()
    ),
    "id of the wrong type (list)": frame(b'{"jsonrpc":"2.0","id":[1],"method":"x"}'),
    "id of the wrong type (object)": frame(b'{"jsonrpc":"2.0","id":{"a":1},"method":"x"}'),
    "id NaN": frame(b'{"jsonrpc":"2.0","id":NaN,"method":"x"}'),
    "id Infinity": frame(b'{"jsonrpc":"2.0","id":Infinity,"method":"x"}'),
    "method of the wrong type": frame(b'{"jsonrpc":"2.0","id":9,"method":[1,2]}'),
    "method a lone surrogate": frame(b'{"jsonrpc":"2.0","id":10,"method":"\\ud800"}'),
    "a response nobody asked for": frame(b'{"jsonrpc":"2.0","id":424242,"result":{"a":1}}'),
    "a response with an error that is not an object": frame(
        b'{"jsonrpc":"2.0","id":424243,"error":"boom"}'
    ),
    "jsonrpc of the wrong type": frame(b'{"jsonrpc":2,"id":11,"method":"x"}'),
    "params a string": frame(
        b'{"jsonrpc":"2.0","id":12,"method":"relavium/listSessions","params":"yes"}'
    ),
    "an integer of 5,000 digits": frame(
        b'{"jsonrpc":"2.0","id":13,"method":"x","params":{"n":' + b"9" * 5000 + b"}}"
    ),
    "exit with odd params": frame(b'{"jsonrpc":"2.0","method":"$/setTrace","params":[[[]]]}'),
}


@pytest.fixture(scope="module")
def lsp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    """One LSP server for every case."""
    running = RawServer.start(tmp_path_factory.mktemp("decode-home"))
    yield running
    assert running.stop() == 0
    assert "Fatal Python error" not in running.stderr_text()


@pytest.mark.parametrize("case", LSP_BODIES, ids=list(LSP_BODIES))
def test_lsp_server_lives_on_after_a_bad_body(lsp_server: RawServer, case: str) -> None:
    answer = lsp_server.call("$/relavium-attack/ping", {}, prefix=LSP_BODIES[case])
    assert answer["error"]["code"] == -32601  # method not found: an answer all the same
    assert lsp_server.process.poll() is None


def test_lsp_deep_request_with_an_id_is_answered_invalid_request(lsp_server: RawServer) -> None:
    request_id = lsp_server.new_id()
    lsp_server.send(frame(deep_request(request_id, "relavium/listSessions")))
    answer = lsp_server.answer(request_id)
    assert answer["error"]["code"] == -32600
    assert "nest" in answer["error"]["message"]
    assert lsp_server.ping()["error"]["code"] == -32601


def test_lsp_bad_bodies_leave_no_traceback_and_a_bounded_log(lsp_server: RawServer) -> None:
    for _ in range(200):  # a flood of the same mistake is logged a bounded number of times
        lsp_server.send(frame(DEEP_ARRAY))
    assert lsp_server.ping()["error"]["code"] == -32601
    log = lsp_server.log_text()
    assert "RecursionError" not in log
    assert "Traceback" not in lsp_server.stderr_text()
    deep_lines = [text for text in log.splitlines() if "nests deeper" in text]
    assert 1 <= len(deep_lines) <= 25, len(deep_lines)


ACP_LINES: dict[str, bytes] = {
    "deeply nested array": DEEP_ARRAY + b"\n",
    "deeply nested object": DEEP_OBJECT + b"\n",
    "one level past the bound": JUST_TOO_DEEP + b"\n",
    "a JSON array": b"[1,2,3]\n",
    "a JSON number": b"42\n",
    "a JSON string": b'"hello"\n',
    "null": b"null\n",
    "not JSON": b"this is not json\n",
    "not UTF-8": b"\xff\xfe\xfd{}\n",
    "two messages on one line": b'{"jsonrpc":"2.0","method":"x"}{"jsonrpc":"2.0"}\n',
    "a response with a list id": b'{"jsonrpc":"2.0","id":[1],"result":1}\n',
    "a response with an object id": b'{"jsonrpc":"2.0","id":{"a":1},"result":1}\n',
    "a response with an error that is not an object": b'{"jsonrpc":"2.0","id":0,"error":"x"}\n',
    "a response nobody asked for": b'{"jsonrpc":"2.0","id":987654,"result":{}}\n',
    "method of the wrong type": b'{"jsonrpc":"2.0","id":5,"method":[1]}\n',
    "method of the wrong type, notification": b'{"jsonrpc":"2.0","method":{"a":1}}\n',
    "method a lone surrogate": b'{"jsonrpc":"2.0","id":6,"method":"\\udc00"}\n',
    "id NaN": b'{"jsonrpc":"2.0","id":NaN,"method":"x"}\n',
    "params a string": b'{"jsonrpc":"2.0","id":7,"method":"session/list","params":"yes"}\n',
    "an integer of 5,000 digits": b'{"jsonrpc":"2.0","id":8,"method":"x","params":{"n":'
    + b"9" * 5000
    + b"}}\n",
    "a line of 70 MB": b"[" + b" " * (70 * 1024 * 1024) + b"]\n",
}


@pytest.fixture(scope="module")
def acp_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawAcpAgent]:
    """One ACP agent for every case."""
    running = RawAcpAgent.start(tmp_path_factory.mktemp("decode-acp-home"))
    yield running
    assert running.stop() == 0
    assert "Fatal Python error" not in running.stderr_text()


@pytest.mark.parametrize("case", ACP_LINES, ids=list(ACP_LINES))
def test_acp_agent_lives_on_after_a_bad_line(acp_agent: RawAcpAgent, case: str) -> None:
    answer = acp_agent.call("relavium-attack/ping", {}, prefix=ACP_LINES[case])
    assert answer["error"]["code"] == -32601
    assert acp_agent.process.poll() is None


def test_acp_deep_request_with_an_id_is_answered_invalid_request(acp_agent: RawAcpAgent) -> None:
    request_id = acp_agent.new_id()
    acp_agent.send(deep_request(request_id, "session/list") + b"\n")
    answer = acp_agent.answer(request_id)
    assert answer["error"]["code"] == -32600
    assert "nest" in answer["error"]["message"]
    assert acp_agent.ping()["error"]["code"] == -32601


def test_acp_not_a_message_with_an_id_is_answered_invalid_request(acp_agent: RawAcpAgent) -> None:
    acp_agent.send(line({"jsonrpc": "2.0", "id": 31337, "method": 5}))
    assert acp_agent.answer(31337)["error"]["code"] == -32600


def test_acp_bad_lines_leave_no_traceback_and_a_bounded_log(acp_agent: RawAcpAgent) -> None:
    for _ in range(200):
        acp_agent.send(DEEP_ARRAY + b"\n")
    assert acp_agent.ping()["error"]["code"] == -32601
    log = acp_agent.log_text()
    assert "RecursionError" not in log
    assert "Traceback" not in log
    assert "Traceback" not in acp_agent.stderr_text()
    deep_lines = [text for text in log.splitlines() if "nests deeper" in text]
    assert 1 <= len(deep_lines) <= 25, len(deep_lines)
