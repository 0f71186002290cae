"""Push and pull framing are one framer: same bodies, rejections, log lines and end of input.

For arbitrary byte streams — valid messages (CRLF or LF, any header case, extra headers),
garbage, bad and wrong lengths, bodies that are not JSON, overlong and unended header lines,
too many headers, a truncated tail — cut into arbitrary chunks, the push parser (fed the
way the server feeds it, or eagerly) yields exactly what the pull reader yields.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import cycle

from hypothesis import given, settings
from hypothesis import strategies as st

from relavium_lsp.server.framing import (
    MAX_HEADER_LINE_BYTES,
    MAX_HEADER_LINES,
    READ_CHUNK_BYTES,
    FrameParser,
    FrameReader,
)
from tests.hypothesis_profiles import examples

# A small message cap, so bodies over it are cheap to generate.
MAX_BODY = 600
LOGGERS = ("relavium_lsp.server.framing",)

Event = tuple[str, bytes]


# -- streams ---------------------------------------------------------------------------------

json_bodies = st.dictionaries(
    st.text(max_size=6), st.one_of(st.integers(), st.text(max_size=12)), max_size=4
).map(lambda fields: json.dumps({"jsonrpc": "2.0", **fields}).encode())
long_bodies = st.integers(MAX_BODY - 40, MAX_BODY + 40).map(
    lambda size: json.dumps({"text": "x" * size}).encode()
)
line_ends = st.sampled_from([b"\r\n", b"\n"])
length_names = st.sampled_from([b"Content-Length", b"content-length", b"CONTENT-LENGTH"])


@st.composite
def valid_frames(draw: st.DrawFn) -> bytes:
    body = draw(st.one_of(json_bodies, long_bodies))
    end = draw(line_ends)
    headers = [draw(length_names) + b": %d" % len(body)]
    if draw(st.booleans()):
        headers.append(b"Content-Type: application/vscode-jsonrpc; charset=utf-8")
    if draw(st.booleans()):
        headers.append(b"Content-Length:%d  " % len(body))  # the same length twice
    order = draw(st.permutations(headers))
    return end.join(order) + end + end + body


@st.composite
def bad_length_frames(draw: st.DrawFn) -> bytes:
    value = draw(
        st.sampled_from(
            [b"-5", b"abc", b"+2", b"0x2", b"", b"0", b"99999999999", b"%d" % (MAX_BODY + 1)]
        )
    )
    return b"Content-Length: " + value + b"\r\n\r\n" + draw(json_bodies)


@st.composite
def wrong_length_frames(draw: st.DrawFn) -> bytes:
    body = draw(json_bodies)
    length = max(1, len(body) + draw(st.integers(-8, 30)))
    return b"Content-Length: %d\r\n\r\n" % length + body


@st.composite
def overlong_lines(draw: st.DrawFn) -> bytes:
    start = draw(st.sampled_from([b"X-Long: ", b"Content-Length: 5", b"content-length:"]))
    size = draw(st.integers(MAX_HEADER_LINE_BYTES - 20, MAX_HEADER_LINE_BYTES + 20))
    return start + b"7" * (size - len(start)) + draw(st.sampled_from([b"", b"\n", b"\r\n"]))


not_json_frames = st.binary(min_size=1, max_size=40).map(
    lambda body: b"Content-Length: %d\r\n\r\n" % len(body) + body
)
marker_soup = st.lists(
    st.sampled_from(
        [
            *(b"Content-Length:", b"content-length: 3", b"CONTENT-LENGTH: 2", b"Content-Len"),
            *(b"\r\n", b"\n", b"\r", b" ", b"{}", b"X-A: 1"),
        ]
    ),
    max_size=12,
).map(b"".join)
segments = st.one_of(
    valid_frames(),
    valid_frames(),
    bad_length_frames(),
    wrong_length_frames(),
    not_json_frames,
    st.binary(max_size=120),
    marker_soup,
    overlong_lines(),
    st.just(b"".join(b"X-H%d: 1\r\n" % n for n in range(MAX_HEADER_LINES + 1)) + b"\r\n{}"),
    st.just(b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"),
    st.just(b"Content-Type: text/plain\r\n\r\n{}"),
    line_ends.map(lambda end: end * 3),
)


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    data = b"".join(draw(st.lists(segments, max_size=14)))
    if data and draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]  # input that ends mid-message
    return data


chunk_sizes = st.lists(
    st.one_of(st.integers(1, 16), st.integers(1, 3 * MAX_HEADER_LINE_BYTES)),
    min_size=1,
    max_size=12,
)


def chunks(data: bytes, sizes: list[int]) -> Iterator[bytes]:
    """``data`` cut into pieces of the given sizes, cycled."""
    position = 0
    for size in cycle(sizes):
        if position >= len(data):
            return
        yield data[position : position + size]
        position += size


# -- runs --------------------------------------------------------------------------------------


@dataclass
class Run:
    """What a framer produced: bodies and rejections in order, then its counters and logs."""

    events: list[Event] = field(default_factory=list)
    framing_errors: int = 0
    skipped_bytes: int = 0
    logs: list[tuple[int, str]] = field(default_factory=list)


def consume(body: bytes, framer: FrameReader | FrameParser) -> Event:
    """What the server does with a body: dispatch JSON, give back the rest."""
    try:
        json.loads(body)
    except ValueError:
        framer.reject(body)
        return ("rejected", body)
    return ("body", body)


class ChunkedStream:
    """A blocking stream whose reads return the given chunk sizes (at most what is asked)."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self._pieces = chunks(data, sizes)
        self._pending = b""

    def read1(self, size: int) -> bytes:
        """The next piece (or its first ``size`` bytes); empty at end."""
        if not self._pending:
            self._pending = next(self._pieces, b"")
        piece, self._pending = self._pending[:size], self._pending[size:]
        return piece


class ByteAtATime:
    """A stream with only ``read`` (the readers then ask for one byte at a time)."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._position = 0

    def read(self, size: int) -> bytes:
        """Up to ``size`` bytes."""
        piece = self._data[self._position : self._position + size]
        self._position += len(piece)
        return piece


class LogCapture(logging.Handler):
    """Every framing log record, as (level, message)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep the record's level and text."""
        self.records.append((record.levelno, record.getMessage()))


def captured(run: Run, framer: FrameReader | FrameParser) -> Run:
    run.framing_errors = framer.framing_errors
    run.skipped_bytes = framer.skipped_bytes
    return run


def pull(framer: FrameReader) -> Run:
    run = Run()
    while (body := framer.next_body()) is not None:
        run.events.append(consume(body, framer))
    return captured(run, framer)


def push(data: bytes, sizes: list[int], eager: list[bool]) -> Run:
    """Feed ``data`` in chunks; drain as the server does (only when the parser needs more),
    or, where ``eager`` says so, feed the next chunk before draining."""
    parser = FrameParser(max_message_bytes=MAX_BODY)
    run = Run()

    def drain() -> None:
        while (body := parser.next_body()) is not None:
            run.events.append(consume(body, parser))

    for chunk, hold in zip(chunks(data, sizes), cycle(eager), strict=False):
        parser.feed(chunk)
        if not hold:
            drain()
    parser.feed_eof()
    drain()
    assert parser.ended
    assert parser.next_body() is None and parser.ended  # it stays ended
    return captured(run, parser)


def with_logs(capture: LogCapture, make_run: Callable[[], Run]) -> Run:
    """``make_run()`` with the log records it caused."""
    capture.records = []
    run = make_run()
    run.logs = capture.records
    return run


@settings(max_examples=examples(300), deadline=None)
@given(
    data=streams(),
    pull_sizes=chunk_sizes,
    push_sizes=chunk_sizes,
    eager=st.lists(st.booleans(), min_size=1, max_size=5),
)
def test_push_and_pull_framing_agree(
    data: bytes, pull_sizes: list[int], push_sizes: list[int], eager: list[bool]
) -> None:
    capture = LogCapture()
    loggers = [logging.getLogger(name) for name in LOGGERS]
    for item in loggers:
        item.addHandler(capture)
    try:
        pulled = with_logs(
            capture,
            lambda: pull(FrameReader(ChunkedStream(data, pull_sizes), max_message_bytes=MAX_BODY)),
        )
        pushed = with_logs(capture, lambda: push(data, push_sizes, [False]))
        pushed_eagerly = with_logs(capture, lambda: push(data, push_sizes, eager))
    finally:
        for item in loggers:
            item.removeHandler(capture)
    assert pushed == pulled
    assert pushed_eagerly == pulled


@settings(max_examples=examples(40), deadline=None)
@given(data=streams())
def test_a_stream_without_read1_is_read_the_same(data: bytes) -> None:
    by_byte = pull(FrameReader(ByteAtATime(data), max_message_bytes=MAX_BODY))
    whole = pull(FrameReader(ChunkedStream(data, [READ_CHUNK_BYTES]), max_message_bytes=MAX_BODY))
    assert whole.events == by_byte.events
