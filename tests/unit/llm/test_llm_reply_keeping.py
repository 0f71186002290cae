"""Regression tests for replies that used to disappear (issue 21): a paid-for answer is kept.

Each test is named after the behaviour it pins down. They run the real adapters against a
loopback server speaking the provider's wire format.
"""

from __future__ import annotations

import json

from relavium_lsp.llm.anthropic.stream import CUT_OFF_CALL
from relavium_lsp.llm.fallback import AttemptFailed, ChainEntry, stream_with_fallback
from relavium_lsp.llm.seam import ErrorChunk, StopChunk, ToolCallEnd, ToolCallStart
from relavium_lsp.testing.loopback import LoopbackServer
from tests.unit.llm.corpus import assert_stream_invariants
from tests.unit.llm.llm_helpers import (
    anthropic,
    collect,
    openai,
    reasoning_of,
    request,
    text_of,
)
from tests.unit.llm.wire_servers import (
    SSE_HEADERS,
    ScriptedResponse,
    ScriptedToolCall,
    anthropic_events,
    openai_chunk,
    sse,
)

CLAUDE = "claude-sonnet-4-5"


def _tool_call_without_finish_reason() -> list[bytes]:
    """What OpenRouter sent: a complete call, usage and [DONE], never a finish_reason."""
    call = {
        "index": 0,
        "id": "call_kept",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "README.md"}'},
    }
    return [
        sse(openai_chunk({"role": "assistant", "content": ""})),
        sse(openai_chunk({"tool_calls": [call]})),
        sse(openai_chunk(usage=(40, 12), choices=False)),
        sse("[DONE]"),
    ]


async def test_tool_call_with_usage_and_done_but_no_finish_reason_is_kept_not_retried(
    server, client
):
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=_tool_call_without_finish_reason()))
    with LoopbackServer() as fallback_server:
        entries = [
            ChainEntry(openai(server, client), "gpt-4o-mini"),
            ChainEntry(openai(fallback_server, client), "gpt-4o"),
        ]
        items = [item async for item in stream_with_fallback(entries, request())]
        assert fallback_server.requests == []  # the answer was not bought twice
    assert not [item for item in items if isinstance(item, AttemptFailed)]
    ends = [item for item in items if isinstance(item, ToolCallEnd)]
    assert [(end.id, end.name, end.args, end.args_error) for end in ends] == [
        ("call_kept", "read_file", {"path": "README.md"}, None)
    ]
    final = items[-1]
    assert isinstance(final, StopChunk) and final.stop_reason == "tool_use"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (40, 12)


async def test_text_with_usage_but_no_finish_reason_completes(server, client):
    events = [
        sse(openai_chunk({"content": "all of it"})),
        sse(openai_chunk(usage=(5, 3), choices=False)),
    ]
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events))
    chunks = await collect(openai(server, client).stream(request()))
    assert text_of(chunks) == "all of it"
    assert isinstance(chunks[-1], StopChunk) and chunks[-1].stop_reason == "stop"


async def test_body_cut_short_after_text_is_an_error_that_is_not_retried(server, client):
    events = [sse(openai_chunk({"content": "half an ans"}))]
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events))
    chunks = await collect(openai(server, client).stream(request()))
    assert text_of(chunks) == "half an ans"
    final = chunks[-1]
    assert isinstance(final, ErrorChunk) and final.error.kind == "transport"
    assert final.error.partial and not final.error.retryable


async def test_content_as_typed_parts_keeps_text_and_reasoning(server, client):
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "2+2 is 4."}]}
    events = [
        sse(openai_chunk({"role": "assistant", "content": [thinking]})),
        # One delta holding the end of the thinking and the start of the answer.
        sse(
            openai_chunk({"content": [{**thinking, "closed": True}, {"type": "text", "text": "4"}]})
        ),
        sse(openai_chunk({"content": [{"type": "text", "text": "!"}]}, finish_reason="stop")),
        sse(openai_chunk(usage=(10, 46), choices=False)),
        sse("[DONE]"),
    ]
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events))
    chunks = await collect(openai(server, client).stream(request()))
    assert text_of(chunks) == "4!"
    assert reasoning_of(chunks) == "2+2 is 4.2+2 is 4."
    assert_stream_invariants(chunks)


async def test_whole_document_with_typed_parts_keeps_text_and_reasoning(server, client):
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "hm"}]},
            {"type": "text", "text": "answer"},
        ],
    }
    document = {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }
    server.script(
        ScriptedResponse(
            headers={"content-type": "application/json"}, body=json.dumps(document).encode()
        )
    )
    chunks = await collect(openai(server, client).stream(request()))
    assert (text_of(chunks), reasoning_of(chunks)) == ("answer", "hm")


async def test_max_tokens_inside_tool_use_returns_the_call_with_an_arguments_error(server, client):
    call = ScriptedToolCall(id="toolu_cut", name="write_file", arguments='{"path": "a.txt", "te')
    events = anthropic_events(text=["Writing it."], tool_calls=[call], stop_reason="max_tokens")
    # The API stops mid-block: the tool_use block never gets its content_block_stop.
    tool_index = 1
    events = [
        event
        for event in events
        if not (b"content_block_stop" in event and f'"index": {tool_index}'.encode() in event)
    ]
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events))
    chunks = await collect(anthropic(server, client).stream(request(model=CLAUDE)))
    assert_stream_invariants(chunks)
    starts = [c for c in chunks if isinstance(c, ToolCallStart)]
    ends = [c for c in chunks if isinstance(c, ToolCallEnd)]
    assert [s.id for s in starts] == [e.id for e in ends] == ["toolu_cut"]
    assert ends[0].args == {} and ends[0].args_error == CUT_OFF_CALL
    final = chunks[-1]
    assert isinstance(final, StopChunk) and final.stop_reason == "length"


async def test_connection_lost_inside_a_tool_call_still_ends_the_call(server, client):
    call = ScriptedToolCall(id="toolu_lost", name="read_file", arguments='{"path": "x"}')
    events = anthropic_events(tool_calls=[call])
    cut = next(i for i, e in enumerate(events) if b"input_json_delta" in e) + 1
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events[:cut], ending="close"))
    chunks = await collect(anthropic(server, client).stream(request(model=CLAUDE)))
    assert_stream_invariants(chunks)
    ends = [c for c in chunks if isinstance(c, ToolCallEnd)]
    assert [e.id for e in ends] == ["toolu_lost"] and ends[0].args_error
    assert isinstance(chunks[-1], ErrorChunk) and not chunks[-1].error.retryable
