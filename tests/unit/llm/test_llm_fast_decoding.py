"""The fast decoding path (bytes-level SSE cutting, msgspec JSON) decodes exactly what the
plain path (line-by-line SSE, the standard library's json) does — on every recorded stream,
on scripted ones, and on anything hypothesis makes up."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from relavium_lsp.llm.anthropic.stream import MessagesDecoder
from relavium_lsp.llm.http.json_codec import loads, standard_loads
from relavium_lsp.llm.http.sse import SseStream
from relavium_lsp.llm.openai.stream import ChatCompletionsDecoder
from relavium_lsp.testing.wire_scripts import (
    ScriptedThinking,
    ScriptedToolCall,
    anthropic_events,
    openai_events,
)
from tests.hypothesis_profiles import examples
from tests.unit.llm.corpus import recordings, without_generated_ids

SIZES = (1, 7, 64, 1 << 20)


def _decode(adapter: str, body: bytes, size: int, *, fast: bool) -> list[dict]:
    kind = MessagesDecoder if adapter == "anthropic" else ChatCompletionsDecoder
    decoder = kind("p", None, loads=loads if fast else standard_loads, fast_sse=fast)
    chunks = []
    for start in range(0, len(body), size):
        chunks += decoder.feed(body[start : start + size])
    chunks += decoder.finish()
    return without_generated_ids(chunks)


def _assert_same(adapter: str, body: bytes) -> None:
    reference = _decode(adapter, body, len(body) or 1, fast=False)
    for size in SIZES:
        assert _decode(adapter, body, size, fast=True) == reference, size
        assert _decode(adapter, body, size, fast=False) == reference, size


@pytest.mark.parametrize("recording", recordings(), ids=lambda r: r.file)
def test_recorded_streams_decode_identically_on_both_paths(recording):
    _assert_same(recording.adapter, recording.body)


def _scripted() -> list[tuple[str, bytes]]:
    call = ScriptedToolCall("call_1", "read_file", json.dumps({"path": "é/ü.py"}), pieces=4)
    openai = b"".join(openai_events(text=["héllo ", "wörld\u2028"], tool_calls=[call]))
    thinking = ScriptedThinking(pieces=["hm ", "ok"], signature="sig")
    anthropic = b"".join(anthropic_events(thinking=[thinking], text=["a", "b"], tool_calls=[call]))
    return [
        ("openai", openai),
        ("anthropic", anthropic),
        ("openai", openai.replace(b"\n", b"\r\n")),  # CRLF servers take the general path
        ("openai", b": keep-alive\n\n" + openai),  # comments too
        ("anthropic", b"\xef\xbb\xbf" + anthropic),  # a byte-order mark
        ("openai", openai.replace(b"data: ", b"data:")),  # no space after the colon
        ("openai", openai[:-2] + b"\xff\xfe\n\n"),  # invalid UTF-8 at the end
    ]


@pytest.mark.parametrize(("adapter", "body"), _scripted())
def test_scripted_and_quirky_streams_decode_identically_on_both_paths(adapter, body):
    _assert_same(adapter, body)


PIECES = st.sampled_from(
    [b"data: ", b"event: x\n", b"\n", b"\r", b"\r\n", b":c\n", b"id: 1\n", b'{"a":1}', b"[DONE]",
     b"\xef\xbb\xbf", b"\xe2\x80\xa8", b"data:", b"x"]
)  # fmt: skip


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(PIECES, max_size=30), st.integers(1, 9))
@example([b"\n", b"\xef\xbb\xbf", b"data: "], 1)  # a BOM after a blank line is not one
def test_sse_data_is_the_same_on_the_fast_and_the_general_path(pieces, size):
    body = b"".join(pieces)
    general = SseStream(fast=False)
    expected = [
        e.data
        for start in range(0, len(body), size)
        for e in general.feed(body[start : start + size])
    ] + [e.data for e in general.finish()]
    fast = SseStream()
    got = [
        d for start in range(0, len(body), size) for d in fast.feed_data(body[start : start + size])
    ]
    got += fast.finish_data()
    as_text = [d.decode("utf-8", "replace") if isinstance(d, bytes) else d for d in got]
    assert as_text == expected


@settings(max_examples=examples(200), deadline=None)
@given(st.binary(max_size=60) | st.text(max_size=30).map(str.encode))
def test_json_loads_agrees_with_the_standard_library(data):
    try:
        expected = standard_loads(data)
    except ValueError:
        with pytest.raises(ValueError):
            loads(data)
        return
    assert loads(data) == expected or (expected != expected)  # NaN is not equal to itself


def _chat_event(delta: dict, **extra: object) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": extra.pop("finish_reason", None)}
    return b"data: " + json.dumps({"choices": [choice], **extra}).encode() + b"\n\n"


# Deltas next to plain text: the fast path decodes their keys and must hand every one of
# them to the general path (or read them exactly as it does).
DELTA_SHAPES = [
    {"content": "plain"},
    {"content": "with role", "role": "assistant"},
    {"role": "assistant"},
    {"content": None, "reasoning_content": "thinking"},
    {"content": "", "reasoning": "thinking"},
    {"content": "both", "reasoning_content": ""},
    {"content": "text", "refusal": None},
    {"refusal": "no"},
    {"content": "x", "function_call": {"name": "f"}},
    {"content": "x", "tool_calls": []},
    {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}]},
    {"content": ["a", {"type": "text", "text": "b"}]},
    {"content": "x", "unknown": 1},
    {"content": 5},
]


@pytest.mark.parametrize("delta", DELTA_SHAPES, ids=lambda d: ",".join(sorted(d)) or "empty")
def test_every_delta_shape_decodes_identically_on_both_paths(delta):
    body = b"".join(
        [
            _chat_event(delta),
            _chat_event({"content": "after"}, usage=None),
            _chat_event({"content": "x"}, usage={}),
            _chat_event({"content": "x"}, error=None),
            _chat_event({}, finish_reason="stop"),
            b"data: [DONE]\n\n",
        ]
    )
    _assert_same("openai", body)


def _messages_event(payload: dict) -> bytes:
    return f"event: {payload.get('type')}\ndata: {json.dumps(payload)}\n\n".encode()


def _block_delta(index: int, **delta: object) -> dict:
    return {"type": "content_block_delta", "index": index, "delta": delta}


MESSAGES_SHAPES = [
    _block_delta(0, type="text_delta", text="t"),
    _block_delta(0, type="text_delta", text=""),
    _block_delta(0, type="text_delta", text=5),
    _block_delta(0, type="text_delta"),
    _block_delta(0, type="thinking_delta", thinking="h"),
    _block_delta(0, type="signature_delta", signature="s"),
    _block_delta(1, type="input_json_delta", partial_json="{"),
    _block_delta(0, text="no type"),
    {"type": "content_block_delta", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
    {"type": "ping"},
    {"type": 7, "delta": {"type": "text_delta", "text": "odd"}},
]  # fmt: skip


@pytest.mark.parametrize("payload", MESSAGES_SHAPES, ids=lambda p: json.dumps(p)[:60])
def test_every_messages_event_shape_decodes_identically_on_both_paths(payload):
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 1}}}
    blocks = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "c", "name": "f", "input": {}}},
    ]  # fmt: skip
    after = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "a"},
    }
    body = b"".join(
        _messages_event(event)
        for event in (start, *blocks, payload, after, {"type": "message_stop"})
    )
    _assert_same("anthropic", body)
