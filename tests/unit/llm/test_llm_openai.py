from __future__ import annotations

import base64
import json

from relavium_lsp.contracts.content import (
    Base64Source,
    MediaPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmMessage,
    LlmRequest,
    ReasoningDelta,
    StopChunk,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from tests.unit.llm.llm_helpers import (
    API_KEY,
    READ_FILE,
    collect,
    openai,
    reasoning_of,
    request,
    text_of,
    user,
)
from tests.unit.llm.wire_servers import (
    SSE_HEADERS,
    ScriptedResponse,
    ScriptedToolCall,
    openai_chunk,
    openai_events,
    openai_stream,
    sse,
)

PIECES = ["Hel", "lo, ", "wörld", " — ", "\u2028", "done", "\n"]


async def test_text_stream_is_reassembled_exactly_with_usage(server, client):
    server.script(openai_stream(text=PIECES, usage=(31, 9)))
    chunks = await collect(openai(server, client).stream(request("hi")))
    assert [c for c in chunks if isinstance(c, TextDelta)] == [TextDelta(text=p) for p in PIECES]
    assert chunks[-1] == StopChunk(
        stop_reason="stop", usage=TokenUsage(input_tokens=31, output_tokens=9)
    )
    assert text_of(chunks) == "".join(PIECES)


async def test_request_is_a_streaming_chat_completion(server, client):
    server.script(openai_stream(text=["ok"]))
    call = LlmRequest(
        model="gpt-4o-mini",
        system="Be brief.",
        messages=(user("hi"),),
        tools=(READ_FILE,),
        tool_choice="read_file",
        temperature=0.2,
        max_tokens=99,
        stop_sequences=("END",),
    )
    await collect(openai(server, client).stream(call))
    received = server.requests[0]
    assert received.method == "POST"
    assert received.path == "/v1/chat/completions"
    assert received.headers["authorization"] == f"Bearer {API_KEY}"
    body = received.json()
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file.",
                "parameters": READ_FILE.parameters,
            },
        }
    ]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "read_file"}}
    assert body["temperature"] == 0.2
    # Not api.openai.com: the widely supported max_tokens, not max_completion_tokens.
    assert body["max_tokens"] == 99
    assert body["stop"] == ["END"]


async def test_no_key_means_no_authorization_header(server, client):
    server.script(openai_stream(text=["ok"]))
    await collect(openai(server, client, api_key=None).stream(request()))
    assert "authorization" not in server.requests[0].headers


async def test_history_maps_tool_calls_results_and_media(server, client):
    server.script(openai_stream(text=["ok"]))
    png = base64.b64encode(b"\x89PNG").decode()
    history = (
        LlmMessage(
            role="user",
            content=(
                TextPart(text="look"),
                MediaPart(mime_type="image/png", source=Base64Source(data=png), name="a.png"),
                MediaPart(mime_type="audio/wav", source=Base64Source(data=png), name="b.wav"),
            ),
        ),
        LlmMessage(
            role="assistant",
            content=(
                ReasoningPart(text="thinking", signature="sig"),
                TextPart(text="Reading."),
                ToolCallPart(id="c1", name="read_file", args={"path": "ä.py"}),
                ToolCallPart(id="c2", name="read_file", args={"path": "b.py"}),
            ),
        ),
        LlmMessage(
            role="tool",
            content=(
                ToolResultPart(tool_call_id="c1", result="print(1)"),
                ToolResultPart(tool_call_id="c2", result="missing", is_error=True),
            ),
        ),
    )
    await collect(openai(server, client).stream(LlmRequest(model="m", messages=history)))
    messages = server.requests[0].json()["messages"]
    assert messages[0]["role"] == "user"
    assert messages[0]["content"][0] == {"type": "text", "text": "look"}
    assert messages[0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{png}"},
    }
    assert "b.wav (audio/wav) was not sent" in messages[0]["content"][2]["text"]
    assert messages[1] == {
        "role": "assistant",
        "content": "Reading.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path":"ä.py"}'},
            },
            {
                "id": "c2",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path":"b.py"}'},
            },
        ],
    }
    assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "print(1)"}
    assert messages[3] == {"role": "tool", "tool_call_id": "c2", "content": "Error: missing"}


async def test_interleaved_parallel_tool_calls_accumulate_by_index(server, client):
    first = ScriptedToolCall("call_a", "read_file", json.dumps({"path": "src/a.py"}), pieces=5)
    second = ScriptedToolCall(
        "call_b", "write_file", json.dumps({"path": "b", "content": "x\ny"}), pieces=4
    )
    server.script(
        openai_stream(text=["Let me look."], tool_calls=[first, second], interleave_tool_calls=True)
    )
    chunks = await collect(openai(server, client).stream(request(tools=(READ_FILE,))))
    starts = [c for c in chunks if isinstance(c, ToolCallStart)]
    assert starts == [
        ToolCallStart(index=0, id="call_a", name="read_file"),
        ToolCallStart(index=1, id="call_b", name="write_file"),
    ]
    for index, call in enumerate((first, second)):
        deltas = [
            c.arguments_delta for c in chunks if isinstance(c, ToolCallDelta) and c.index == index
        ]
        assert "".join(deltas) == call.arguments
    ends = [c for c in chunks if isinstance(c, ToolCallEnd)]
    assert ends == [
        ToolCallEnd(index=0, id="call_a", name="read_file", args={"path": "src/a.py"}),
        ToolCallEnd(index=1, id="call_b", name="write_file", args={"path": "b", "content": "x\ny"}),
    ]
    assert chunks[-1] == StopChunk(
        stop_reason="tool_use", usage=TokenUsage(input_tokens=12, output_tokens=7)
    )
    assert text_of(chunks) == "Let me look."


async def test_malformed_tool_arguments_become_args_error_not_a_crash(server, client):
    broken = ScriptedToolCall("call_x", "read_file", '{"path": "a.py"', pieces=2)
    listed = ScriptedToolCall("call_y", "read_file", "[1, 2]", pieces=1)
    server.script(openai_stream(tool_calls=[broken, listed]))
    chunks = await collect(openai(server, client).stream(request()))
    ends = [c for c in chunks if isinstance(c, ToolCallEnd)]
    assert ends[0].args == {} and ends[0].args_error is not None
    assert "not valid JSON" in ends[0].args_error
    assert ends[1].args_error == "arguments must be a JSON object"
    assert isinstance(chunks[-1], StopChunk)


async def test_reasoning_content_and_reasoning_fields(server, client):
    server.script(
        openai_stream(reasoning=["Think", "ing."], text=["Answer"]),
        openai_stream(reasoning=["Ollama ", "style"], reasoning_field="reasoning", text=["A"]),
    )
    provider = openai(server, client)
    first = await collect(provider.stream(request()))
    second = await collect(provider.stream(request()))
    assert reasoning_of(first) == "Thinking."
    assert all(c.signature is None for c in first if isinstance(c, ReasoningDelta))
    assert text_of(first) == "Answer"
    assert reasoning_of(second) == "Ollama style"


async def test_finish_reasons_map_to_stop_reasons(server, client):
    server.script(
        openai_stream(text=["a"], finish_reason="length"),
        openai_stream(text=["a"], finish_reason="content_filter"),
        openai_stream(text=["a"], finish_reason="something_new"),
    )
    provider = openai(server, client)
    reasons = [(await collect(provider.stream(request())))[-1].stop_reason for _ in range(3)]
    assert reasons == ["length", "content_filter", "stop"]


async def test_refusal_completes_as_content_filter(server, client):
    events = [
        sse(openai_chunk({"role": "assistant", "refusal": ""})),
        sse(openai_chunk({"refusal": "I can't help with that."})),
        sse(openai_chunk({}, finish_reason="stop")),
        sse("[DONE]"),
    ]
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events))
    chunks = await collect(openai(server, client).stream(request()))
    assert text_of(chunks) == "I can't help with that."
    assert chunks[-1] == StopChunk(stop_reason="content_filter", usage=TokenUsage())


async def test_missing_done_is_fine_but_missing_finish_is_a_transport_error(server, client):
    server.script(
        openai_stream(text=["ok"], done=False),
        ScriptedResponse(headers=SSE_HEADERS, body=openai_events(text=["par"])[:2]),
    )
    provider = openai(server, client)
    complete = await collect(provider.stream(request()))
    assert complete[-1] == StopChunk(
        stop_reason="stop", usage=TokenUsage(input_tokens=12, output_tokens=7)
    )
    truncated = await collect(provider.stream(request()))
    assert isinstance(truncated[-1], ErrorChunk)
    assert truncated[-1].error.kind == "transport"


async def test_server_that_ignores_stream_true_still_works(server, client):
    body = {
        "id": "x",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Whole answer",
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path":"a"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3},
    }
    server.script(
        ScriptedResponse(
            headers={"content-type": "application/json"}, body=json.dumps(body).encode()
        )
    )
    chunks = await collect(openai(server, client).stream(request()))
    assert text_of(chunks) == "Whole answer"
    assert next(c for c in chunks if isinstance(c, ToolCallEnd)).args == {"path": "a"}
    assert chunks[-1] == StopChunk(
        stop_reason="tool_use", usage=TokenUsage(input_tokens=5, output_tokens=3)
    )


async def test_malformed_event_is_a_typed_error(server, client):
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=[sse("{not json")]))
    chunks = await collect(openai(server, client).stream(request()))
    assert len(chunks) == 1 and isinstance(chunks[0], ErrorChunk)
    assert chunks[0].error.kind == "unknown"


async def test_official_endpoint_uses_max_completion_tokens():
    from relavium_lsp.llm.openai.wire import request_body

    call = request(max_tokens=10)
    assert request_body(call, official=True)["max_completion_tokens"] == 10
    assert "max_tokens" not in request_body(call, official=True)


async def test_local_server_tool_call_quirks(server, client):
    events = [
        sse(openai_chunk({"role": "assistant"})),
        # Ollama: whole calls, no index, arguments already parsed.
        sse(
            openai_chunk(
                {
                    "tool_calls": [
                        {"id": "o1", "function": {"name": "read_file", "arguments": {"path": "a"}}},
                        {"function": {"name": "read_file", "arguments": {"path": "b"}}},
                    ]
                }
            )
        ),
        # A server that reuses index 0 for a second call with a new id.
        sse(openai_chunk({"tool_calls": [{"index": 0, "id": "r2", "function": {"name": "x"}}]})),
        sse(openai_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]})),
        sse(
            openai_chunk({"tool_calls": [{"index": 5, "id": "n", "function": {"name": "y" * 300}}]})
        ),
        sse(openai_chunk({}, finish_reason="tool_calls")),
        sse("[DONE]"),
    ]
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events))
    chunks = await collect(openai(server, client).stream(request()))
    ends = [c for c in chunks if isinstance(c, ToolCallEnd)]
    assert [(e.index, e.name, e.args, e.args_error) for e in ends[:3]] == [
        (0, "read_file", {"path": "a"}, None),
        (1, "read_file", {"path": "b"}, None),
        (2, "x", {}, None),
    ]
    assert ends[0].id == "o1" and ends[1].id.startswith("call_") and ends[2].id == "r2"
    assert len(ends[3].name) == 200 and ends[3].args_error == "the tool name is too long"
    starts = [c for c in chunks if isinstance(c, ToolCallStart)]
    assert [s.index for s in starts] == [0, 1, 2, 3]
    assert all(len(s.name) <= 200 for s in starts)
