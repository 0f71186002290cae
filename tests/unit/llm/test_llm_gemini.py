"""The Gemini adapter over a loopback server: SSE and JSON-array framing, signatures, outcomes."""

from __future__ import annotations

import json

import pytest

from relavium_lsp.contracts.content import ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from relavium_lsp.llm.authorized_http import HeaderKeyCredentials
from relavium_lsp.llm.gemini.provider import GeminiProvider
from relavium_lsp.llm.gemini.stream import GeminiDecoder, JsonArrayElements
from relavium_lsp.llm.gemini.wire import request_body
from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmMessage,
    LlmRequest,
    ReasoningDelta,
    StopChunk,
    ToolCallEnd,
)
from relavium_lsp.testing.cloud_scripts import (
    ScriptedGeminiCall,
    gemini_chunks,
    gemini_stream,
    google_error,
)
from relavium_lsp.testing.wire_scripts import SSE_HEADERS, sse
from tests.unit.llm.llm_helpers import READ_FILE, collect, reasoning_of, request, text_of, user
from tests.unit.llm.wire_servers import ScriptedResponse

GEMINI_KEY = "AIzaSy-gemini-key-0123456789abcdefghijk"


def _gemini(server, client, key: str | None = GEMINI_KEY) -> GeminiProvider:
    return GeminiProvider(
        "gemini",
        credentials=HeaderKeyCredentials("gemini", key, "x-goog-api-key", "GEMINI_API_KEY"),
        base_url=f"{server.url}/v1beta",
        client=client,
        timeout_s=5.0,
    )


@pytest.mark.parametrize("framing", ["sse", "json"])
async def test_thoughts_text_a_signed_call_and_usage(framing, server, client):
    server.script(
        gemini_stream(
            framing=framing,
            thoughts=["Checking the file."],
            text=["I'll read ", "it."],
            calls=[ScriptedGeminiCall("read_file", {"path": "a.py"}, signature="c2lnLWNhbGw=")],
            usage=(5000, 40),
            thoughts_tokens=120,
            cached=4096,
        )
    )
    chunks = await collect(
        _gemini(server, client).stream(request(model="gemini-2.5-pro", tools=(READ_FILE,)))
    )
    assert reasoning_of(chunks) == "Checking the file."
    assert text_of(chunks) == "I'll read it."
    calls = [c for c in chunks if isinstance(c, ToolCallEnd)]
    assert [(c.name, c.args) for c in calls] == [("read_file", {"path": "a.py"})]
    final = chunks[-1]
    assert isinstance(final, StopChunk) and final.stop_reason == "tool_use"
    assert (final.usage.input_tokens, final.usage.cache_read_tokens) == (5000, 4096)
    assert final.usage.output_tokens == 160  # thoughts are billed as output
    sent = server.requests[0]
    expected = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    assert sent.path == expected and sent.headers["x-goog-api-key"] == GEMINI_KEY
    body = sent.json()
    assert body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True}
    assert (
        body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"] == READ_FILE.parameters
    )


async def test_the_call_signature_goes_back_on_its_own_function_call_part(server, client):
    server.script(
        gemini_stream(calls=[ScriptedGeminiCall("read_file", {"path": "a"}, signature="U0lH")])
    )
    chunks = await collect(_gemini(server, client).stream(request(model="gemini-3-pro-preview")))
    call = next(c for c in chunks if isinstance(c, ToolCallEnd))
    signed = [c for c in chunks if isinstance(c, ReasoningDelta) and c.signature]
    assistant = LlmMessage(
        role="assistant",
        content=(
            ReasoningPart(text="", signature=signed[0].signature),
            ReasoningPart(text="", signature="oai-responses:{}"),
            ToolCallPart(id=call.id, name=call.name, args=call.args),
        ),
    )
    answer = LlmMessage(role="tool", content=(ToolResultPart(tool_call_id=call.id, result="42"),))
    body = request_body(
        LlmRequest(
            model="gemini-3-pro-preview", messages=(user("go"), assistant, answer, user("thanks"))
        )
    )
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "go"}]},
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {"name": "read_file", "args": {"path": "a"}},
                    "thoughtSignature": "U0lH",
                }
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "read_file", "response": {"result": "42"}}},
                {"text": "thanks"},
            ],
        },
    ]


def test_a_text_signature_goes_back_on_the_text_part():
    decoder = GeminiDecoder("gemini", None)
    chunks = [
        c
        for chunk in gemini_chunks(text=["Done."], text_signature="VFhU")
        for c in decoder.payload(json.dumps(chunk))
    ]
    signed = next(c for c in chunks if isinstance(c, ReasoningDelta) and c.signature)
    message = LlmMessage(
        role="assistant",
        content=(ReasoningPart(text="", signature=signed.signature), TextPart(text="Done.")),
    )
    body = request_body(LlmRequest(model="gemini-2.5-flash", messages=(user("q"), message)))
    assert body["contents"][1] == {
        "role": "model",
        "parts": [{"text": "Done.", "thoughtSignature": "VFhU"}],
    }


@pytest.mark.parametrize(
    ("finish", "kind", "words"),
    [
        ("SAFETY", "content_filter", "dangerous_content"),
        ("MALFORMED_FUNCTION_CALL", "bad_request", "could not be parsed"),
    ],
)
async def test_blocking_finish_reasons_are_clear_errors(finish, kind, words, server, client):
    ratings = [
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}
    ]
    server.script(
        gemini_stream(
            text=["Partial"],
            finish=finish,
            safety=ratings,
            finish_message="Malformed function call: x(",
        )
    )
    chunks = await collect(_gemini(server, client).stream(request(model="gemini-2.5-flash")))
    final = chunks[-1]
    assert isinstance(final, ErrorChunk) and final.error.kind == kind
    assert words in final.error.message


async def test_max_tokens_is_a_length_stop_and_a_blocked_prompt_is_a_filter_error(server, client):
    blocked = {
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 9},
    }
    server.script(
        gemini_stream(text=["cut"], finish="MAX_TOKENS"),
        ScriptedResponse(headers=SSE_HEADERS, body=[sse(blocked)]),
    )
    provider = _gemini(server, client)
    first = await collect(provider.stream(request(model="gemini-2.5-flash")))
    assert isinstance(first[-1], StopChunk) and first[-1].stop_reason == "length"
    second = await collect(provider.stream(request(model="gemini-2.5-flash")))
    assert isinstance(second[-1], ErrorChunk) and second[-1].error.kind == "content_filter"
    assert "prohibited_content" in second[-1].error.message


async def test_a_stream_cut_before_its_finish_reason_is_incomplete(server, client):
    server.script(gemini_stream(text=["par", "tial"], finish=None, ending="close"))
    chunks = await collect(_gemini(server, client).stream(request(model="gemini-2.5-flash")))
    assert isinstance(chunks[-1], ErrorChunk) and chunks[-1].error.kind == "transport"
    assert chunks[-1].error.partial


async def test_google_errors_an_invalid_key_and_a_retry_delay(server, client):
    server.script(
        google_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid.",
            details=[
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}
            ],
        ),
        google_error(
            429,
            "RESOURCE_EXHAUSTED",
            "Quota exceeded.",
            details=[{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}],
        ),
    )
    provider = _gemini(server, client)
    first = await collect(provider.stream(request(model="gemini-2.5-pro")))
    assert isinstance(first[-1], ErrorChunk) and first[-1].error.kind == "auth"
    assert GEMINI_KEY not in first[-1].error.message
    second = await collect(provider.stream(request(model="gemini-2.5-pro")))
    assert isinstance(second[-1], ErrorChunk) and second[-1].error.kind == "rate_limit"
    assert second[-1].error.retry_after_s == 37.0


def test_json_array_elements_survive_any_cut_and_strings_holding_brackets():
    body = b'[{"a": "}]{[\\"x"},\r\n{"b": [1, {"c": 2}]}\n]'
    for size in range(1, len(body) + 1):
        splitter = JsonArrayElements()
        found = [e for i in range(0, len(body), size) for e in splitter.feed(body[i : i + size])]
        assert found == [b'{"a": "}]{[\\"x"}', b'{"b": [1, {"c": 2}]}'], size
        assert not splitter.broken
    broken = JsonArrayElements()
    broken.feed(b'{"not": "an array"}')
    assert broken.broken


async def test_unicode_split_across_seven_byte_reads(server, client):
    body = b"".join(
        sse(json.dumps(c, ensure_ascii=False)) for c in gemini_chunks(text=["Größe ", "🎉✓ ok"])
    )
    server.script(
        ScriptedResponse(
            headers=SSE_HEADERS, body=[body[i : i + 7] for i in range(0, len(body), 7)]
        )
    )
    chunks = await collect(_gemini(server, client).stream(request(model="gemini-2.0-flash")))
    assert text_of(chunks) == "Größe 🎉✓ ok"
    assert "thinkingConfig" not in server.requests[0].json().get("generationConfig", {})
