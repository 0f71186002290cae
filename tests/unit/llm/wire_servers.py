"""Loopback HTTP servers that speak the OpenAI and Anthropic streaming wire formats.

Import from anywhere in the test suite::

    from tests.unit.llm.wire_servers import LoopbackServer, openai_stream, anthropic_stream

Typical use (a real socket on 127.0.0.1, real HTTP/1.1, real SSE bytes)::

    with LoopbackServer() as server:
        server.script(
            openai_stream(text=["Hel", "lo"], usage=(10, 2)),            # 1st request
            openai_error(429, "slow down", headers={"retry-after": "1"}),  # 2nd request
        )
        provider = OpenAICompatibleProvider(
            "openai", base_url=server.url + "/v1", api_key="sk-test", client=client, timeout_s=5
        )
        ...
        assert server.requests[0].json()["stream"] is True
        assert server.requests[0].headers["authorization"] == "Bearer sk-test"
        assert await server.wait_for_disconnect(0)     # after cancelling the consumer

- :class:`LoopbackServer` — serves on ``127.0.0.1:0`` from a background thread (works from
  sync tests, async tests and while a test awaits a subprocess); ``script(*responses)``
  queues one response per request, or pass ``responder=fn(request) -> ScriptedResponse``;
  ``requests`` records every request (``method``, ``path``, ``headers``, ``body``,
  ``json()``); ``wait_for_requests(n)`` and ``await wait_for_disconnect(i)`` synchronise on
  what the server observed; requests that found no scripted response land in ``unscripted``.
- :class:`ScriptedResponse` — ``status``, ``headers``, ``body`` (bytes, or an iterable of
  byte pieces sent as chunked transfer) and ``ending``: ``complete``, ``stall`` (silence until
  the client hangs up: timeouts, cancellation), ``close`` (FIN before the body is complete)
  or ``reset`` (TCP RST).
- Builders: ``openai_stream`` / ``openai_events`` / ``openai_error``,
  ``anthropic_stream`` / ``anthropic_events`` / ``anthropic_error`` /
  ``anthropic_error_event``, ``sse``, ``ScriptedToolCall``, ``ScriptedThinking``.

The implementation lives in :mod:`relavium_lsp.testing.loopback` and
:mod:`relavium_lsp.testing.wire_scripts` because the offline cassette recorder uses it too.
"""

from __future__ import annotations

from relavium_lsp.testing.loopback import (
    Ending,
    LoopbackServer,
    ReceivedRequest,
    Responder,
    ScriptedResponse,
)
from relavium_lsp.testing.wire_scripts import (
    SSE_HEADERS,
    ScriptedThinking,
    ScriptedToolCall,
    anthropic_error,
    anthropic_error_event,
    anthropic_event,
    anthropic_events,
    anthropic_stream,
    openai_chunk,
    openai_error,
    openai_events,
    openai_stream,
    sse,
)

__all__ = [
    "SSE_HEADERS",
    "Ending",
    "LoopbackServer",
    "ReceivedRequest",
    "Responder",
    "ScriptedResponse",
    "ScriptedThinking",
    "ScriptedToolCall",
    "anthropic_error",
    "anthropic_error_event",
    "anthropic_event",
    "anthropic_events",
    "anthropic_stream",
    "openai_chunk",
    "openai_error",
    "openai_events",
    "openai_stream",
    "sse",
]
