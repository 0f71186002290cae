"""Hostile or broken servers: whatever the bytes, a decoder returns chunks and never raises."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from relavium_lsp.llm.anthropic.provider import MessagesDecoder
from relavium_lsp.llm.http.stream_guard import StreamGuard
from relavium_lsp.llm.openai.provider import ChatCompletionsDecoder, WholeCompletionDecoder
from relavium_lsp.llm.seam import ErrorChunk, StopChunk
from tests.hypothesis_profiles import examples
from tests.unit.llm.corpus import assert_stream_invariants

KEYS = st.sampled_from(
    [
        "type",
        "index",
        "delta",
        "choices",
        "content",
        "tool_calls",
        "function",
        "name",
        "arguments",
        "id",
        "finish_reason",
        "usage",
        "prompt_tokens",
        "completion_tokens",
        "message",
        "content_block",
        "text",
        "thinking",
        "signature",
        "partial_json",
        "stop_reason",
        "error",
        "reasoning",
        "reasoning_content",
        "refusal",
        "input",
        "input_tokens",
        "output_tokens",
        "data",
    ]
)
VALUES = st.sampled_from(
    [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "error",
        "text_delta",
        "input_json_delta",
        "thinking_delta",
        "signature_delta",
        "tool_use",
        "thinking",
        "redacted_thinking",
        "text",
        "stop",
        "tool_calls",
        "length",
        "end_turn",
        "[DONE]",
        "",
    ]
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | VALUES | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=25,
)


def events(payloads: list[object]) -> bytes:
    return b"".join(f"data: {json.dumps(p)}\n\n".encode() for p in payloads)


def check(decoder, data: bytes) -> None:
    chunks = []
    for start in range(0, len(data), 13):
        chunks += decoder.feed(data[start : start + 13])
    chunks += decoder.finish()
    finals = [c for c in chunks if isinstance(c, StopChunk | ErrorChunk)]
    assert len(finals) == 1
    assert chunks[-1] is finals[0]
    # Through the stream guard (as every provider call runs) all the seam's promises hold.
    guard = StreamGuard()
    assert_stream_invariants(guard.admit(chunks))


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(JSONISH, max_size=8))
def test_chat_completions_decoder_survives_anything(payloads):
    check(ChatCompletionsDecoder("p", "secret"), events(payloads))


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(JSONISH, max_size=8))
def test_messages_decoder_survives_anything(payloads):
    check(MessagesDecoder("p", "secret"), events(payloads))


@settings(max_examples=examples(100), deadline=None)
@given(st.binary(max_size=300))
def test_raw_bytes_never_crash_either_decoder(data):
    check(ChatCompletionsDecoder("p", None), data)
    check(MessagesDecoder("p", None), data)
    check(WholeCompletionDecoder("p", None), data)
