"""Text deltas cut past a learned envelope are exactly what the general path reads.

The fast path learns a stream's text envelope (``relavium_lsp.llm.text_envelope``) and then
decodes only the JSON string between its two halves. Every stream here — clean runs, runs
broken by other envelopes, by tokens that are not one JSON string, by invalid UTF-8 or lone
surrogates, by events of another kind — decodes to the same chunks as the line-by-line SSE
parser with the standard library's JSON, whatever the read sizes.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from relavium_lsp.llm.anthropic_stream import MessagesDecoder
from relavium_lsp.llm.fast_events import chat_text, messages_text
from relavium_lsp.llm.json_codec import loads, standard_loads
from relavium_lsp.llm.openai_stream import ChatCompletionsDecoder
from relavium_lsp.llm.seam import LlmChunk, TextDelta
from relavium_lsp.llm.text_envelope import MAX_LEARNED, TextEnvelope, learn
from tests.hypothesis_profiles import examples
from tests.unit.llm.corpus import without_generated_ids

SIZES = (1, 7, 64, 200, 1000, 1 << 20)

# (data before the text, data after it): the envelope most events share, a second one, and
# shapes the typed decoder hands to the general path although they hold text.
CHAT_ENVELOPES = [
    (b'{"id": "c-1", "object": "chat.completion.chunk", "choices": [{"index": 0, '
     b'"delta": {"content": ', b'}, "finish_reason": null}]}'),
    (b'{"choices":[{"delta":{"content":', b"}}]}"),
    (b'{"choices": [{"delta": {"content": ', b', "tool_calls": null}}]}'),
    (b'{"choices": [{"delta": {"role": "assistant", "content": ', b'}}], "usage": null}'),
    # the first envelope's head with a tail as long as its own: only the tail tells them apart
    (b'{"id": "c-1", "object": "chat.completion.chunk", "choices": [{"index": 0, '
     b'"delta": {"content": ', b'}, "finish_reason": "st"}]}'),
    # a short head and a long tail
    (b'{"choices":[{"delta":{"content":', b'}, "logprobs": null, "x": "' + b"y" * 80 + b'"}]}'),
]  # fmt: skip
MESSAGES_ENVELOPES = [
    (b'{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ',
     b"}}"),
    (b'{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":', b"}}"),
    (b'{"type": "content_block_delta", "delta": {"text": ', b', "type": "text_delta"}}'),
    (b'{"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", '
     b'"thinking": ', b"}}"),
    (b'{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ',
     b"}5"),
    # a short head and a long tail
    (b'{"type":"content_block_delta","delta":{"type":"text_delta","text":',
     b', "z": "' + b"w" * 80 + b'"}}'),
]  # fmt: skip
ODD_TOKENS = [
    b"5", b"null", b'"a" ', b' "a"', b'"a", "x": 1', b'"\\ud800"', b'"\xff"', b'"a\\"b"',
    b'"\\\\"', b'""', b'"q"', b'"r"', b'"\xe2\x80\xa8"', b'"a', b'a"', b'"\\u0071"', b'"\\/"',
    b'"\t"', b"",
]  # fmt: skip
TOKENS = st.one_of(
    st.text(max_size=12).map(lambda text: json.dumps(text).encode()),
    st.text(max_size=12).map(lambda text: json.dumps(text, ensure_ascii=False).encode()),
    st.sampled_from(ODD_TOKENS),
)


def _decode(adapter: str, body: bytes, size: int, *, fast: bool) -> list[LlmChunk]:
    kind = MessagesDecoder if adapter == "anthropic" else ChatCompletionsDecoder
    decoder = kind("p", None, loads=loads if fast else standard_loads, fast_sse=fast)
    chunks = []
    for start in range(0, len(body), size):
        chunks += decoder.feed(body[start : start + size])
    chunks += decoder.finish()
    return chunks


def _assert_same(adapter: str, body: bytes) -> None:
    reference = without_generated_ids(_decode(adapter, body, len(body) or 1, fast=False))
    for size in SIZES:
        assert without_generated_ids(_decode(adapter, body, size, fast=True)) == reference, size


# How an event's SSE block is framed: as providers do (most), or with what the envelope
# path must leave to the SSE parser — another line in the block, a comment before it, no
# space after ``data:``, a second blank line.
FRAMINGS = [
    b"data: %s\n\n", b"data: %s\n\n", b"data: %s\n\n", b"data: %s\nid: 7\n\n",
    b"data: %s\ndata: x\n\n", b": c\ndata: %s\n\n", b"data:%s\n\n", b"data: %s\n\n\n",
]  # fmt: skip
Event = tuple[int, bytes, int]


def _chat_body(events: list[Event]) -> bytes:
    blocks = [b'data: {"choices": [{"delta": {"role": "assistant", "content": ""}}]}\n\n']
    for kind, token, framing in events:
        head, tail = CHAT_ENVELOPES[kind]
        blocks.append(FRAMINGS[framing].replace(b"%s", head + token + tail))
    blocks.append(b'data: {"choices": [{"delta": {}, "finish_reason": "stop"}]}\n\n')
    blocks.append(b"data: [DONE]\n\n")
    return b"".join(blocks)


def _messages_body(events: list[Event], *, event_lines: bool = True) -> bytes:
    def block(data: bytes) -> bytes:
        kind = json.loads(data)["type"] if event_lines and data.startswith(b"{") else None
        line = f"event: {kind}\n".encode() if kind else b""
        return line + b"data: " + data + b"\n\n"

    start = b'{"type": "message_start", "message": {"usage": {"input_tokens": 3}}}'
    opened = b'{"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}'
    blocks = [block(start), block(opened)]
    for kind, token, framing in events:
        data = MESSAGES_ENVELOPES[kind][0] + token + MESSAGES_ENVELOPES[kind][1]
        line = b"event: content_block_delta\n" if event_lines else b""
        blocks.append(line + FRAMINGS[framing].replace(b"%s", data))
    blocks.append(block(b'{"type": "content_block_stop", "index": 0}'))
    blocks.append(block(b'{"type": "message_delta", "delta": {"stop_reason": "end_turn"}}'))
    blocks.append(block(b'{"type": "message_stop"}'))
    return b"".join(blocks)


EVENTS = st.lists(
    st.tuples(
        st.sampled_from([0, 0, 0, 0, 0, 1, 2, 3, 4, 5]), TOKENS, st.integers(0, len(FRAMINGS) - 1)
    ),
    max_size=40,
)  # mostly the first envelope and plain framing, so runs form and break


@settings(max_examples=examples(150), deadline=None)
@given(EVENTS)
@example([(0, b'"a"', 0)] * 5 + [(0, b'"\\ud800"', 0)] + [(0, b'"b"', 0)] * 5)
@example([(0, b'"a"', 0)] * 5 + [(0, b'"\xff"', 0)] + [(1, b'"b"', 0)] * 5)
@example([(0, b'"a"', 0)] * 5 + [(0, b'"b"', 4)] + [(4, b'"c"', 0)] * 5)
def test_chat_streams_decode_identically_with_envelopes(events):
    _assert_same("openai", _chat_body(events))


@settings(max_examples=examples(150), deadline=None)
@given(EVENTS, st.booleans())
@example([(0, b'"a"', 0)] * 5 + [(0, b"5", 0)] + [(0, b'"b"', 3)] * 5, True)
@example([(0, b'"a"', 0)] * 5 + [(4, b'"b"', 0)] + [(0, b'"c"', 0)] * 5, False)
def test_messages_streams_decode_identically_with_envelopes(events, event_lines):
    _assert_same("anthropic", _messages_body(events, event_lines=event_lines))


@pytest.mark.parametrize(
    ("adapter", "body"),
    [
        ("openai", _chat_body([(0, json.dumps(f"t{i} ").encode(), 0) for i in range(50)])),
        ("anthropic", _messages_body([(0, json.dumps(f"t{i} ").encode(), 0) for i in range(50)])),
    ],
)
def test_a_clean_stream_is_cut_past_its_envelope(adapter, body):
    kind = MessagesDecoder if adapter == "anthropic" else ChatCompletionsDecoder
    decoder = kind("p", None)
    scanned = 0
    chunks: list[LlmChunk] = []
    for start in range(0, len(body), 300):
        had = decoder._envelope is not None
        produced = decoder.feed(body[start : start + 300])
        scanned += len(produced) if had else 0
        chunks += produced
    chunks += decoder.finish()
    assert decoder._envelope is not None and scanned > 30  # the envelope path did the work
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == [f"t{i} " for i in range(50)]
    _assert_same(adapter, body)


def test_learn_needs_one_unambiguous_text_position():
    data = b'{"choices": [{"delta": {"content": "x"}}]}'
    envelope = learn(data, "x", b"data: ", chat_text)
    assert isinstance(envelope, TextEnvelope)
    assert envelope.head == b'data: {"choices": [{"delta": {"content": '
    assert envelope.tail == b"}}]}"
    # the text's encoding occurs twice: no position to trust
    twice = b'{"id": "x", "choices": [{"delta": {"content": "x"}}]}'
    assert learn(twice, "x", b"data: ", chat_text) is None
    # escaped otherwise than msgspec would, and "x" elsewhere: the probe refuses
    elsewhere = b'{"id": "x", "choices": [{"delta": {"content": "\\u0078"}}]}'
    assert learn(elsewhere, "x", b"data: ", chat_text) is None
    # the text is "q": the probes use other texts
    assert learn(b'{"choices": [{"delta": {"content": "q"}}]}', "q", b"data: ", chat_text)
    # the text's encoding sits at a key, and one probe alone would read back: the text is
    # "text" (the later key wins), and renaming that key to "q" leaves the earlier one's "q"
    keyed = (
        b'{"type": "content_block_delta", "delta": {"type": "text_delta", '
        b'"\\u0074ext": "q", "text": "\\u0074ext"}}'
    )
    assert messages_text(keyed) == "text"
    assert learn(keyed, "text", b"event: content_block_delta\ndata: ", messages_text) is None
    messages = b'{"type": "content_block_delta", "delta": {"type": "text_delta", "text": "t"}}'
    assert learn(messages, "t", b"event: content_block_delta\ndata: ", messages_text)


def test_an_envelope_changing_every_event_stops_being_learned():
    events = [
        b'data: {"n": ' + str(i).encode() + b', "choices": [{"delta": {"content": "t"}}]}\n\n'
        for i in range(3 * MAX_LEARNED)
    ]
    decoder = ChatCompletionsDecoder("p", None)
    for event in events:
        decoder.feed(event)
    assert decoder._learned == MAX_LEARNED
    body = b"".join(events) + b"data: [DONE]\n\n"
    _assert_same("openai", body)
