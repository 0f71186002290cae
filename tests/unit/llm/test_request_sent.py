"""Hearing when a provider request is written (``llm/request_sent.py``; issue 25)."""

from __future__ import annotations

from relavium_lsp.llm.request_sent import notify_when_sent, trace_extension


async def test_the_trace_tells_every_enclosing_listener_once_the_body_is_written() -> None:
    assert trace_extension() is None  # nobody listens: no tracing at all
    heard: list[str] = []
    with notify_when_sent(lambda: heard.append("outer")):
        with notify_when_sent(lambda: heard.append("inner")):
            extension = trace_extension()
        assert extension is not None
        trace = extension["trace"]
        await trace("http11.send_request_headers.complete", {})
        assert heard == []
        await trace("http11.send_request_body.complete", {})
        assert heard == ["outer", "inner"]
        await trace("connection.connect_tcp.failed", {})  # a failure ends the wait as well
        assert heard == ["outer", "inner", "outer", "inner"]
    assert trace_extension() is None
