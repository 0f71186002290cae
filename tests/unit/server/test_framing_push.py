"""The framer's push mode (:class:`FrameParser`): bodies as chunks arrive, bounded, always ending.

The event loop feeds the parser whatever one read returned and takes complete bodies; it
must never block, never hold more than a body (or a header line) plus one chunk, and every
input must end — including the two that used to spin the pull reader forever.
"""

from __future__ import annotations

import io
import json
import logging

import pytest

from relavium_lsp.server.framing import (
    MAX_FRAMING_WARNINGS,
    MAX_HEADER_LINE_BYTES,
    READ_CHUNK_BYTES,
    FrameParser,
    FrameReader,
)

FRAMING_LOGGER = "relavium_lsp.server.framing"


def frame(body: bytes, end: bytes = b"\r\n") -> bytes:
    """One correctly framed message."""
    return b"Content-Length: %d" % len(body) + end + end + body


def drain(parser: FrameParser) -> list[bytes]:
    """Every complete body the parser holds now."""
    bodies = []
    while (body := parser.next_body()) is not None:
        bodies.append(body)
    return bodies


def test_bodies_come_out_as_soon_as_they_are_complete() -> None:
    parser = FrameParser()
    parser.feed(frame(b'{"a": 1}') + frame(b'{"b": 2}', b"\n") + b"Content-Len")
    assert drain(parser) == [b'{"a": 1}', b'{"b": 2}']
    assert not parser.ended  # needs more, input has not ended
    parser.feed(b"gth: 2\r\n\r\n{")
    assert drain(parser) == []
    parser.feed(b"}")
    assert drain(parser) == [b"{}"]


def test_a_message_fed_one_byte_at_a_time_is_one_body() -> None:
    parser = FrameParser()
    message = frame(b'{"jsonrpc": "2.0", "method": "initialized"}')
    seen = []
    for index in range(len(message)):
        parser.feed(message[index : index + 1])
        seen.extend(drain(parser))
        assert seen == ([] if index < len(message) - 1 else [message.split(b"\r\n\r\n")[1]])


def test_clean_end_of_input_ends_without_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    parser = FrameParser()
    parser.feed(frame(b"{}") + b"\r\n\r\n")
    assert drain(parser) == [b"{}"]
    parser.feed_eof()
    with caplog.at_level(logging.INFO, logger=FRAMING_LOGGER):
        assert parser.next_body() is None
    assert parser.ended
    assert caplog.records == []
    assert parser.next_body() is None and parser.ended  # it stays ended


def test_end_of_input_inside_a_body_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    parser = FrameParser()
    parser.feed(b'Content-Length: 500\r\n\r\n{"jsonrpc"')
    assert drain(parser) == []
    parser.feed_eof()
    with caplog.at_level(logging.INFO, logger=FRAMING_LOGGER):
        assert drain(parser) == []
    assert parser.ended
    assert [record.getMessage() for record in caplog.records] == [
        "the client's input ended inside a message body (10 of 500 bytes)"
    ]


def test_a_rejected_body_gives_back_the_message_it_swallowed() -> None:
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    parser = FrameParser()
    parser.feed(b"Content-Length: %d\r\n\r\n" % (len(ping) + 12) + ping + frame(ping))
    swallowed = parser.next_body()  # the server rejects it before asking for the next one
    assert swallowed == ping + b"Content-Leng"
    parser.reject(swallowed)
    assert drain(parser) == [ping]
    assert parser.framing_errors == 1


@pytest.mark.parametrize(
    ("data", "errors"),
    [
        # A header cut off by the end of input.
        (frame(b"{}") + b"Content-Length: 5", 1),
        # A "Content-Length:" line over the cap, and then an unended one.
        (
            b"Content-Length: 5" + b"7" * MAX_HEADER_LINE_BYTES + frame(b"{}") + b"content-length:",
            2,
        ),
    ],
    ids=["unended header at end of input", "overlong Content-Length line"],
)
def test_a_header_line_without_an_end_is_stepped_past_not_found_forever(
    data: bytes, errors: int
) -> None:
    # Both spun the pull reader forever: it found the same "Content-Length:" again and again.
    parser = FrameParser()
    parser.feed(data)
    parser.feed_eof()
    assert drain(parser) == [b"{}"]
    assert parser.ended
    reader = FrameReader(io.BytesIO(data))
    assert reader.next_body() == b"{}"
    assert reader.next_body() is None
    assert reader.framing_errors == parser.framing_errors == errors


def test_warnings_turn_to_info_after_the_first_few(caplog: pytest.LogCaptureFixture) -> None:
    parser = FrameParser()
    with caplog.at_level(logging.INFO, logger=FRAMING_LOGGER):
        for _ in range(MAX_FRAMING_WARNINGS + 5):
            parser.feed(b"Content-Length: -1\r\n\r\n")
            assert drain(parser) == []
    levels = [record.levelno for record in caplog.records]
    assert levels == [logging.WARNING] * MAX_FRAMING_WARNINGS + [logging.INFO] * 5
    assert "further framing errors are logged at INFO" in caplog.records[-6].getMessage()


def test_a_large_body_in_chunks_is_held_once_plus_one_chunk() -> None:
    body = json.dumps({"text": "x" * (10 * 1024 * 1024)}).encode()
    data = frame(body)
    parser = FrameParser()
    most_held = 0
    bodies = []
    for start in range(0, len(data), READ_CHUNK_BYTES):
        parser.feed(data[start : start + READ_CHUNK_BYTES])
        most_held = max(most_held, parser.buffered_bytes)
        bodies.extend(drain(parser))
    assert bodies == [body]
    assert most_held <= len(body) + READ_CHUNK_BYTES
    assert parser.buffered_bytes == 0


def test_garbage_is_not_kept_while_searching_for_a_header() -> None:
    parser = FrameParser()
    garbage = bytes(range(256)).replace(b"\n", b"") * 4096  # 1 MiB without a line end
    for start in range(0, len(garbage), READ_CHUNK_BYTES):
        parser.feed(garbage[start : start + READ_CHUNK_BYTES])
        assert drain(parser) == []
        assert parser.buffered_bytes < len(b"content-length:")
    parser.feed(b"\r\n" + frame(b"{}"))
    assert drain(parser) == [b"{}"]
    assert parser.skipped_bytes == len(garbage) + 2
