from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from relavium_lsp.llm.http.sse import LineSplitter, SseDecoder, SseEvent


def parse(chunks: list[bytes]) -> list[SseEvent]:
    splitter = LineSplitter()
    decoder = SseDecoder()
    events: list[SseEvent] = []
    lines = [line for chunk in chunks for line in splitter.feed(chunk)] + splitter.flush()
    for line in lines:
        event = decoder.feed_line(line)
        if event is not None:
            events.append(event)
    tail = decoder.flush()
    if tail is not None:
        events.append(tail)
    return events


STREAM = (
    b"\xef\xbb\xbf: keep-alive comment\r\n"
    b"event: message_start\r\n"
    b"id: 7\r\n"
    b'data: {"a":1}\r\n'
    b"\r\n"
    b"data:first\n"
    b"data: second\n"
    b"retry: 100\n"
    b"\n"
    b"event: ignored-without-data\n"
    b"\n"
    b"data: lone cr\r\r"
    b"data: \xe2\x80\xa8 inside \xc2\x85 json\n\n"
)


def test_fields_comments_multiline_and_terminators():
    events = parse([STREAM])
    assert events == [
        SseEvent(event="message_start", data='{"a":1}', id="7"),
        SseEvent(event="message", data="first\nsecond", id="7"),
        SseEvent(event="message", data="lone cr", id="7"),
        # U+2028 and U+0085 are not line terminators in SSE (httpx.aiter_lines would split).
        SseEvent(event="message", data="\u2028 inside \u0085 json", id="7"),
    ]


@given(st.lists(st.integers(min_value=1, max_value=len(STREAM)), max_size=30))
def test_any_chunking_gives_the_same_events(cuts):
    points = sorted(set(cuts))
    pieces = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    assert parse([piece for piece in pieces if piece]) == parse([STREAM])


def test_crlf_split_across_chunks_is_one_terminator():
    events = parse([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"])
    assert events == [SseEvent(event="message", data="a\nb")]


def test_unterminated_last_event_is_flushed():
    assert parse([b"data: [DONE]"]) == [SseEvent(event="message", data="[DONE]")]


def test_field_without_colon_and_id_with_nul():
    events = parse([b"data\nid: a\x00b\n\n"])
    assert events == [SseEvent(event="message", data="", id=None)]


def test_invalid_utf8_is_replaced_not_fatal():
    assert parse([b"data: \xff\n\n"]) == [SseEvent(event="message", data="\ufffd")]


def test_sse_stream_matches_the_two_stage_parser():
    from relavium_lsp.llm.http.sse import SseStream

    stream = SseStream()
    events = []
    for start in range(0, len(STREAM), 7):
        events += stream.feed(STREAM[start : start + 7])
    events += stream.finish()
    assert events == parse([STREAM])


# LF-only (the fast path), with a long event held over several reads and a blank line that a
# cut can split between two reads.
FAST_STREAM = (
    b"event: response.output_text.delta\n"
    b'data: {"delta":"a"}\n'
    b"\n"
    b'data: {"text":"' + b"x" * 200 + b'"}\n'
    b"\n"
    b": comment\n"
    b"data: two\n"
    b"data: lines\n"
    b"\n"
    b"\n"
    b'data: {"last":1}\n'
    b"\n"
)


def complete_data(data: bytes) -> list[str]:
    """The data of the events these bytes complete (none still waiting for its blank line)."""
    decoder = SseDecoder()
    events = [decoder.feed_line(line) for line in LineSplitter().feed(data)]
    return [event.data for event in events if event is not None]


@given(st.lists(st.integers(min_value=1, max_value=len(FAST_STREAM)), max_size=30))
def test_every_event_comes_out_of_the_read_that_completes_it(cuts):
    from relavium_lsp.llm.http.sse import SseStream

    points = sorted(set(cuts))
    stream = SseStream()
    found: list[str] = []
    for a, b in zip([0, *points], [*points, len(FAST_STREAM)], strict=True):
        read = stream.feed_data(FAST_STREAM[a:b])  # bytes on the fast path, str otherwise
        found += [data.decode() if isinstance(data, bytes) else data for data in read]
        assert found == complete_data(FAST_STREAM[:b])
    assert stream.finish_data() == []
