"""``RelaviumProtocol.notify_json``: the bytes pygls's ``notify`` writes, without its converter."""

from __future__ import annotations

from typing import Any

import pytest

from relavium_lsp.contracts.events import AgentToken, AgentToolCall, StampedEvent
from relavium_lsp.server.app import create_server
from relavium_lsp.server.core import RelaviumServer
from relavium_lsp.server.methods import SESSION_EVENT


class Capture:
    """A synchronous pygls writer that keeps what it was given."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def close(self) -> None:
        return None

    def write(self, data: bytes) -> None:
        self.frames.append(data)


class Failing(Capture):
    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    def write(self, data: bytes) -> None:
        raise self.error


def token_event(text: str) -> StampedEvent:
    return StampedEvent(
        session_id="0b5f3c1e-1111-2222-3333-444455556666",
        sequence_number=42,
        timestamp="2026-11-27T01:00:00.000000Z",
        payload=AgentToken(token=text, model="gpt-4o-mini"),
    )


PARAMS: list[dict[str, Any]] = [
    token_event("t0 ").to_wire(),
    token_event('naïve "quoted" \\ back\nslash — 日本語 😀').to_wire(),
    {"type": "x", "nested": {"list": [1, 2.5, None, True, {"a": []}]}, "empty": {}},
    {},
]


@pytest.fixture
def server() -> RelaviumServer:
    return create_server()


@pytest.mark.parametrize("params", PARAMS)
@pytest.mark.parametrize("headers", [True, False])
def test_bytes_identical_to_pygls_notify(
    server: RelaviumServer, params: dict[str, Any], headers: bool
) -> None:
    ours, pygls = Capture(), Capture()
    server.protocol.set_writer(pygls, include_headers=headers)
    server.protocol.notify(SESSION_EVENT, params)
    server.protocol.set_writer(ours, include_headers=headers)
    server.protocol.notify_json(SESSION_EVENT, params)
    assert ours.frames == pygls.frames
    assert len(ours.frames) == 1


def test_a_tool_event_too(server: RelaviumServer) -> None:
    event = StampedEvent(
        session_id="s",
        sequence_number=1,
        timestamp="2026-11-27T01:00:00.000000Z",
        payload=AgentToolCall(
            tool_id="read_file", call_id="c1", tool_input={"path": "a.py"}, model="m"
        ),
    )
    ours, pygls = Capture(), Capture()
    server.protocol.set_writer(pygls)
    server.protocol.notify(SESSION_EVENT, event.to_wire())
    server.protocol.set_writer(ours)
    server.protocol.notify_json(SESSION_EVENT, event.to_wire())
    assert ours.frames == pygls.frames


def test_no_writer_sends_nothing(server: RelaviumServer) -> None:
    server.protocol.writer = None
    server.protocol.notify_json(SESSION_EVENT, {"type": "x"})  # logged, not raised


def test_a_broken_pipe_is_raised_like_pygls(server: RelaviumServer) -> None:
    server.protocol.set_writer(Failing(BrokenPipeError()))
    with pytest.raises(BrokenPipeError):
        server.protocol.notify_json(SESSION_EVENT, {"type": "x"})


def test_another_write_error_is_reported_like_pygls(
    server: RelaviumServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    reported: list[Exception] = []
    monkeypatch.setattr(
        server, "report_server_error", lambda error, _source: reported.append(error)
    )
    server.protocol.set_writer(Failing(OSError("disk")))
    server.protocol.notify_json(SESSION_EVENT, {"type": "x"})
    assert [str(error) for error in reported] == ["disk"]
