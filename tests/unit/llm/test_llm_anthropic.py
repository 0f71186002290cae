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
from relavium_lsp.llm.anthropic.wire import ANTHROPIC_VERSION, CONTINUATION_PROMPT
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
    anthropic,
    collect,
    reasoning_of,
    request,
    text_of,
    user,
)
from tests.unit.llm.wire_servers import (
    SSE_HEADERS,
    ScriptedResponse,
    ScriptedThinking,
    ScriptedToolCall,
    anthropic_error_event,
    anthropic_event,
    anthropic_events,
    anthropic_stream,
)


def without_cache_control(value):
    """The wire body with prompt-cache breakpoints removed (they have their own test)."""
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(item) for item in value]
    return value


CLAUDE = "claude-sonnet-4-5"


async def test_text_stream_with_usage_and_headers(server, client):
    pieces = ["Bon", "jour", " ✓", "\n", "fin"]
    server.script(anthropic_stream(text=pieces, usage=(40, 12)))
    chunks = await collect(anthropic(server, client).stream(request(model=CLAUDE, system="Sys")))
    assert [c for c in chunks if isinstance(c, TextDelta)] == [TextDelta(text=p) for p in pieces]
    assert chunks[-1] == StopChunk(
        stop_reason="stop", usage=TokenUsage(input_tokens=40, output_tokens=12)
    )
    received = server.requests[0]
    assert received.path == "/v1/messages"
    assert received.headers["x-api-key"] == API_KEY
    assert received.headers["anthropic-version"] == ANTHROPIC_VERSION
    assert "authorization" not in received.headers
    body = received.json()
    ephemeral = {"type": "ephemeral"}
    assert body["system"] == [{"type": "text", "text": "Sys", "cache_control": ephemeral}]
    assert body["stream"] is True
    assert body["max_tokens"] == 64_000  # defaulted from the catalog
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hello", "cache_control": ephemeral}]}
    ]


async def test_thinking_signature_redacted_and_tools(server, client):
    first = ScriptedToolCall("toolu_1", "read_file", json.dumps({"path": "a.py"}), pieces=4)
    second = ScriptedToolCall("toolu_2", "read_file", json.dumps({"path": "b.py"}), pieces=3)
    server.script(
        anthropic_stream(
            thinking=[ScriptedThinking(["Let me ", "check."], signature="SIG-abc")],
            redacted_thinking=["OPAQUE-DATA"],
            text=["Reading both."],
            tool_calls=[first, second],
            usage=(100, 50),
        )
    )
    chunks = await collect(
        anthropic(server, client).stream(request(model=CLAUDE, tools=(READ_FILE,)))
    )
    reasoning = [c for c in chunks if isinstance(c, ReasoningDelta)]
    assert reasoning == [
        ReasoningDelta(text="Let me "),
        ReasoningDelta(text="check."),
        ReasoningDelta(text="", signature="SIG-abc"),
        ReasoningDelta(text="", signature="OPAQUE-DATA", redacted=True),
    ]
    assert reasoning_of(chunks) == "Let me check."
    assert text_of(chunks) == "Reading both."
    assert [c for c in chunks if isinstance(c, ToolCallStart)] == [
        ToolCallStart(index=0, id="toolu_1", name="read_file"),
        ToolCallStart(index=1, id="toolu_2", name="read_file"),
    ]
    joined = "".join(
        c.arguments_delta for c in chunks if isinstance(c, ToolCallDelta) and c.index == 0
    )
    assert joined == first.arguments
    assert [c for c in chunks if isinstance(c, ToolCallEnd)] == [
        ToolCallEnd(index=0, id="toolu_1", name="read_file", args={"path": "a.py"}),
        ToolCallEnd(index=1, id="toolu_2", name="read_file", args={"path": "b.py"}),
    ]
    assert chunks[-1] == StopChunk(
        stop_reason="tool_use", usage=TokenUsage(input_tokens=100, output_tokens=50)
    )
    body = without_cache_control(server.requests[0].json())
    assert body["tools"] == [
        {"name": "read_file", "description": "Read a file.", "input_schema": READ_FILE.parameters}
    ]
    assert body["tool_choice"] == {"type": "auto"}


async def test_cache_tokens_count_as_input_and_are_reported_apart(server, client):
    events = anthropic_events(text=["x"], usage=(10, 3))
    start = json.loads(events[0].decode().split("data: ", 1)[1])
    start["message"]["usage"].update(cache_creation_input_tokens=5, cache_read_input_tokens=20)
    events[0] = anthropic_event("message_start", message=start["message"])
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events))
    chunks = await collect(anthropic(server, client).stream(request(model=CLAUDE)))
    assert chunks[-1].usage == TokenUsage(
        input_tokens=35, output_tokens=3, cache_read_tokens=20, cache_write_tokens=5
    )


async def test_stop_reasons(server, client):
    server.script(
        anthropic_stream(text=["a"], stop_reason="max_tokens"),
        anthropic_stream(text=["I won't"], stop_reason="refusal"),
        anthropic_stream(text=["a"], stop_reason="stop_sequence"),
    )
    provider = anthropic(server, client)
    reasons = [
        (await collect(provider.stream(request(model=CLAUDE))))[-1].stop_reason for _ in range(3)
    ]
    assert reasons == ["length", "content_filter", "stop"]


async def test_in_stream_error_events_map_by_type(server, client):
    def erroring(error_type: str) -> ScriptedResponse:
        events = anthropic_events(text=["par", "tial"], usage=(9, 4), stop=False)[:-1]
        return ScriptedResponse(
            headers=SSE_HEADERS, body=[*events, anthropic_error_event(error_type, "Overloaded")]
        )

    server.script(
        erroring("overloaded_error"),
        erroring("rate_limit_error"),
        erroring("invalid_request_error"),
    )
    provider = anthropic(server, client)
    kinds = []
    for _ in range(3):
        chunks = await collect(provider.stream(request(model=CLAUDE)))
        assert text_of(chunks) == "partial"
        assert isinstance(chunks[-1], ErrorChunk)
        assert chunks[-1].usage.input_tokens == 9  # spent before the failure
        kinds.append(chunks[-1].error.kind)
    assert kinds == ["overloaded", "rate_limit", "bad_request"]


async def test_stream_cut_after_its_stop_reason_still_completes(server, client):
    # message_delta (the stop reason) follows every content block: the answer is whole.
    server.script(anthropic_stream(text=["whole"], stop=False))
    chunks = await collect(anthropic(server, client).stream(request(model=CLAUDE)))
    assert text_of(chunks) == "whole"
    assert isinstance(chunks[-1], StopChunk) and chunks[-1].stop_reason == "stop"


async def test_stream_cut_before_its_stop_reason_is_a_transport_error_not_retryable(server, client):
    events = anthropic_events(text=["half"])
    cut = next(i for i, event in enumerate(events) if b"message_delta" in event)
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events[:cut]))
    chunks = await collect(anthropic(server, client).stream(request(model=CLAUDE)))
    assert text_of(chunks) == "half"
    assert isinstance(chunks[-1], ErrorChunk) and chunks[-1].error.kind == "transport"
    assert not chunks[-1].error.retryable


async def test_projection_rules_on_the_wire(server, client):
    server.script(anthropic_stream(text=["ok"]))
    png = base64.b64encode(b"img").decode()
    history = (
        LlmMessage(role="assistant", content=(TextPart(text="Earlier answer"),)),
        user("next"),
        LlmMessage(
            role="assistant",
            content=(
                ReasoningPart(text="signed thought", signature="SIG-1"),
                ReasoningPart(text="", signature="REDACTED-BLOB", redacted=True),
                ReasoningPart(text="unsigned thought from history"),
                TextPart(text="  "),
                ToolCallPart(id="toolu_9", name="read_file", args={"path": "x"}),
            ),
        ),
        LlmMessage(
            role="tool", content=(ToolResultPart(tool_call_id="toolu_9", result="", is_error=True),)
        ),
        LlmMessage(
            role="user",
            content=(
                TextPart(text="and this image"),
                MediaPart(mime_type="image/png", source=Base64Source(data=png)),
            ),
        ),
    )
    await collect(
        anthropic(server, client).stream(LlmRequest(model=CLAUDE, messages=history, max_tokens=55))
    )
    body = without_cache_control(server.requests[0].json())
    assert body["max_tokens"] == 55
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": CONTINUATION_PROMPT}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Earlier answer"}]},
        {"role": "user", "content": [{"type": "text", "text": "next"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "signed thought", "signature": "SIG-1"},
                {"type": "redacted_thinking", "data": "REDACTED-BLOB"},
                {"type": "tool_use", "id": "toolu_9", "name": "read_file", "input": {"path": "x"}},
            ],
        },
        {
            # The tool message and the next user message merge; tool_result comes first.
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_9",
                    "content": "(no output)",
                    "is_error": True,
                },
                {"type": "text", "text": "and this image"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": png},
                },
            ],
        },
    ]


async def test_base_url_with_v1_suffix(server, client):
    from relavium_lsp.llm.anthropic.provider import AnthropicProvider

    server.script(anthropic_stream(text=["ok"]))
    provider = AnthropicProvider(
        "anthropic", base_url=f"{server.url}/v1/", api_key=None, client=client, timeout_s=5
    )
    chunks = await collect(provider.stream(request(model=CLAUDE)))
    assert isinstance(chunks[-1], StopChunk)
    assert server.requests[0].path == "/v1/messages"
    assert "x-api-key" not in server.requests[0].headers


async def test_tool_choice_variants():
    from relavium_lsp.llm.anthropic.wire import request_body

    def choice(value: str) -> object:
        return request_body(request(model=CLAUDE, tools=(READ_FILE,), tool_choice=value))[
            "tool_choice"
        ]

    assert choice("none") == {"type": "none"}
    assert choice("required") == {"type": "any"}
    assert choice("read_file") == {"type": "tool", "name": "read_file"}
    assert "tool_choice" not in request_body(request(model=CLAUDE))


async def test_cache_breakpoints_sit_after_tools_system_and_the_two_newest_user_turns(
    server, client
):
    server.script(anthropic_stream(text=["ok"]))
    history = (
        user("first"),
        LlmMessage(role="assistant", content=(TextPart(text="one"),)),
        user("second"),
        LlmMessage(role="assistant", content=(TextPart(text="two"),)),
        user("third"),
    )
    call = LlmRequest(model=CLAUDE, system="Sys", messages=history, tools=(READ_FILE, READ_FILE))
    await collect(anthropic(server, client).stream(call))
    body = server.requests[0].json()
    marked = [
        (where, block.get("text", block.get("name")))
        for where, blocks in [("system", body["system"]), ("tools", body["tools"])]
        + [(m["role"], m["content"]) for m in body["messages"]]
        for block in blocks
        if "cache_control" in block
    ]
    assert marked == [
        ("system", "Sys"),
        ("tools", "read_file"),
        ("user", "second"),
        ("user", "third"),
    ]
    assert sum(1 for _ in marked) <= 4  # the API's limit
    assert body["tools"][0].get("cache_control") is None  # only the last tool


async def test_prompt_caching_can_be_turned_off(server, client):
    server.script(anthropic_stream(text=["ok"]))
    provider = anthropic(server, client)
    provider.prompt_caching = False
    await collect(provider.stream(request(model=CLAUDE, system="Sys")))
    assert "cache_control" not in json.dumps(server.requests[0].json())
