"""The OpenAI Responses adapter over a loopback server speaking the Responses SSE events."""

from __future__ import annotations

import json

from relavium_lsp.contracts.content import ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from relavium_lsp.llm.reasoning_state import RESPONSES, owned_by, tagged
from relavium_lsp.llm.responses.provider import OpenAIResponsesProvider
from relavium_lsp.llm.responses.wire import request_body
from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmMessage,
    LlmRequest,
    ReasoningDelta,
    StopChunk,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from relavium_lsp.testing.cloud_scripts import ScriptedReasoning, responses_events, responses_stream
from relavium_lsp.testing.wire_scripts import SSE_HEADERS, ScriptedToolCall, sse
from tests.unit.llm.llm_helpers import (
    API_KEY,
    READ_FILE,
    collect,
    reasoning_of,
    request,
    text_of,
    user,
)
from tests.unit.llm.wire_servers import ScriptedResponse


def _provider(server, client) -> OpenAIResponsesProvider:
    return OpenAIResponsesProvider(
        "openai", base_url=f"{server.url}/v1", api_key=API_KEY, client=client, timeout_s=5.0
    )


async def test_text_reasoning_and_two_streamed_calls_arrive_with_their_usage(server, client):
    server.script(
        responses_stream(
            reasoning=[ScriptedReasoning(summary=["**Plan**", "Read both files."])],
            text=["Let me ", "look."],
            tool_calls=[
                ScriptedToolCall("call_a", "read_file", '{"path": "a.py"}'),
                ScriptedToolCall("call_b", "read_file", '{"path": "b.py"}'),
            ],
            usage=(1200, 300),
            cached=1000,
            reasoning_tokens=200,
        )
    )
    chunks = await collect(
        _provider(server, client).stream(request(model="gpt-5", tools=(READ_FILE,)))
    )
    assert text_of(chunks) == "Let me look."
    assert reasoning_of(chunks) == "**Plan**\n\nRead both files."
    starts = [c for c in chunks if isinstance(c, ToolCallStart)]
    ends = [c for c in chunks if isinstance(c, ToolCallEnd)]
    assert [(c.index, c.id, c.name) for c in starts] == [
        (0, "call_a", "read_file"),
        (1, "call_b", "read_file"),
    ]
    assert [c.args for c in ends] == [{"path": "a.py"}, {"path": "b.py"}]
    assert len([c for c in chunks if isinstance(c, ToolCallDelta)]) >= 4  # arguments in pieces
    carried = [c.signature for c in chunks if isinstance(c, ReasoningDelta) and c.signature]
    assert len(carried) == 1
    item = json.loads(owned_by(carried[0], RESPONSES) or "")
    assert item["id"] == "rs_1" and item["encrypted_content"] == "gAAAAB-encrypted"
    final = chunks[-1]
    assert isinstance(final, StopChunk) and final.stop_reason == "tool_use"
    assert (final.usage.input_tokens, final.usage.cache_read_tokens) == (1200, 1000)
    assert final.usage.output_tokens == 300  # reasoning tokens are output tokens
    sent = server.requests[0]
    assert sent.path == "/v1/responses"
    assert sent.headers["authorization"] == f"Bearer {API_KEY}"
    body = sent.json()
    assert body["stream"] is True and body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"summary": "auto"}
    assert "temperature" not in body
    assert body["tools"][0] == {
        "type": "function",
        "name": "read_file",
        "description": READ_FILE.description,
        "parameters": READ_FILE.parameters,
    }


def test_reasoning_items_go_back_before_the_calls_they_led_to_and_foreign_ones_stay_out():
    item = {"type": "reasoning", "id": "rs_9", "summary": [], "encrypted_content": "gAAA-x"}
    assistant = LlmMessage(
        role="assistant",
        content=(
            ReasoningPart(text="thinking", signature=tagged(RESPONSES, json.dumps(item))),
            ReasoningPart(text="anthropic thinking", signature="EqQBCkYIARgCIkD"),
            TextPart(text="Reading."),
            ToolCallPart(id="call_1", name="read_file", args={"path": "a"}),
        ),
    )
    results = LlmMessage(
        role="tool", content=(ToolResultPart(tool_call_id="call_1", result="boom", is_error=True),)
    )
    body = request_body(
        LlmRequest(
            model="gpt-5-codex", system="Be brief.", messages=(user("hi"), assistant, results)
        )
    )
    assert body["instructions"] == "Be brief."
    assert body["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        item,
        {"role": "assistant", "content": "Reading."},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "read_file",
            "arguments": '{"path":"a"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "Error: boom"},
    ]


def test_a_chat_model_keeps_its_temperature_and_asks_for_no_reasoning():
    body = request_body(request(model="gpt-4.1", temperature=0.2, max_tokens=50))
    assert body["temperature"] == 0.2 and body["max_output_tokens"] == 50
    assert "reasoning" not in body and "include" not in body


async def test_response_failed_and_error_events_become_typed_errors(server, client):
    failed = responses_events(text=["partial"], status="failed")
    quota = [
        sse(json.dumps({"type": "response.created", "response": {"id": "r"}})),
        sse(
            json.dumps(
                {
                    "type": "error",
                    "error": {
                        "type": "rate_limit_exceeded",
                        "code": "rate_limit_exceeded",
                        "message": f"slow down {API_KEY}",
                    },
                }
            )
        ),
    ]
    server.script(
        ScriptedResponse(headers=SSE_HEADERS, body=failed),
        ScriptedResponse(headers=SSE_HEADERS, body=quota),
    )
    provider = _provider(server, client)
    first = await collect(provider.stream(request(model="gpt-5")))
    assert isinstance(first[-1], ErrorChunk)
    assert first[-1].error.kind == "overloaded" and first[-1].error.partial
    second = await collect(provider.stream(request(model="gpt-5")))
    assert isinstance(second[-1], ErrorChunk)
    assert second[-1].error.kind == "rate_limit" and second[-1].error.retryable
    assert API_KEY not in second[-1].error.message


async def test_an_incomplete_response_is_a_length_stop(server, client):
    server.script(responses_stream(text=["cut"], status="incomplete"))
    chunks = await collect(_provider(server, client).stream(request(model="gpt-5")))
    assert isinstance(chunks[-1], StopChunk) and chunks[-1].stop_reason == "length"


async def test_unicode_split_across_reads_and_a_connection_lost_mid_stream(server, client):
    events = responses_events(text=["日本語の", "テキスト 🎉"])
    body = b"".join(events)
    pieces = [body[i : i + 7] for i in range(0, len(body), 7)]
    server.script(
        ScriptedResponse(headers=SSE_HEADERS, body=pieces),
        ScriptedResponse(headers=SSE_HEADERS, body=events[:5], ending="close"),
    )
    provider = _provider(server, client)
    whole = await collect(provider.stream(request(model="gpt-4.1")))
    assert text_of(whole) == "日本語のテキスト 🎉"
    cut = await collect(provider.stream(request(model="gpt-4.1")))
    assert isinstance(cut[-1], ErrorChunk) and cut[-1].error.kind == "transport"
    assert cut[-1].error.partial  # text was delivered: the chain must not buy it twice


async def test_a_codex_model_on_openai_goes_to_the_responses_api_by_itself(server, client):
    from relavium_lsp.llm.openai_compat import OpenAICompatibleProvider

    class OfficialLoopback(OpenAICompatibleProvider):
        # Only OpenAI's own endpoint is routed: the test treats the loopback server as it.
        @property
        def _official(self) -> bool:
            return True

    server.script(responses_stream(text=["from responses"]))
    provider = OfficialLoopback(
        "openai", base_url=f"{server.url}/v1", api_key=API_KEY, client=client, timeout_s=5.0
    )
    # The catalog says gpt-5-codex needs the Responses API.
    chunks = await collect(provider.stream(request(model="gpt-5-codex")))
    assert text_of(chunks) == "from responses"
    assert server.requests[0].path == "/v1/responses"
