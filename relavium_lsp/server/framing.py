"""A capped, resynchronising parser for LSP base-protocol framing on stdio (issue 16).

pygls's stdio loop trusts the peer: it reads ``Content-Length`` bytes uncapped (``99999999999``
is a ``MemoryError``), and after any framing slip — a negative or non-numeric length, a
missing header, LF-only separators, binary garbage — it never finds a message boundary
again, so the server lives on without ever answering. :class:`FrameParser` instead:

* caps a message body at :data:`MAX_MESSAGE_BYTES` and a header line at
  :data:`MAX_HEADER_LINE_BYTES`, so no input makes it hold more than that (plus the one
  chunk just read);
* accepts CRLF and bare LF line ends and header names in any case;
* on anything else logs **one** line saying what was wrong (a warning for the first
  :data:`MAX_FRAMING_WARNINGS`, then INFO) and skips to the next ``Content-Length:`` header;
  a body the caller finds is not JSON goes back through :meth:`FrameParser.reject` and is
  searched too, so a length that was too long gives back the next message it swallowed;
* always makes progress: a ``Content-Length:`` starting a line with no line end (over the
  cap, or the input's last bytes) is stepped past, not found again and again;
* reports end of input only when the input has ended, which ends the server cleanly.

The parser is **push-driven** and never blocks: the caller hands it what it read
(:meth:`~FrameParser.feed`) and takes complete bodies (:meth:`~FrameParser.next_body`) until
it needs more. :mod:`relavium_lsp.server.stdio` feeds it from the event loop when stdin is
readable (no reader thread, no thread hop per message). :class:`FrameReader` is the same
parser pulled from a blocking stream — the fallback for input the event loop cannot watch
(a regular file) — so there is one framer, not two to keep in step.

A body arriving in many chunks is appended to one buffer (amortised, never re-copied per
chunk) and copied out once when complete.
"""

from __future__ import annotations

import enum
import logging
import re
from typing import Protocol

from relavium_lsp.json_guard import MAX_MESSAGE_BYTES

__all__ = ["MAX_MESSAGE_BYTES", "ByteSource", "FrameParser", "FrameReader", "FramingError"]

logger = logging.getLogger(__name__)

# The longest header line (real ones are under 100 bytes) and the most header lines per message.
MAX_HEADER_LINE_BYTES = 8 * 1024
MAX_HEADER_LINES = 16
READ_CHUNK_BYTES = 64 * 1024
# Framing errors reported as warnings (stderr, the editor's output) before INFO takes over.
MAX_FRAMING_WARNINGS = 20

CONTENT_LENGTH_MARKER = b"content-length:"
# Field name, colon, value; both printable ASCII (RFC 7230 token-ish, kept permissive).
_HEADER_LINE = re.compile(rb"^([!-9;-~]+):[ \t]*([ -~]*?)[ \t]*$")
_DIGITS = re.compile(rb"^[0-9]{1,20}$")


class ByteSource(Protocol):
    """What :class:`FrameReader` reads from: a binary stream (``read1`` is used when it has one)."""

    def read(self, size: int, /) -> bytes:
        """Up to ``size`` bytes; empty at end of input."""
        ...


class FramingError(Exception):
    """The peer's bytes are not a well-formed LSP message here; the text says why."""


class _UnendedLine(FramingError):
    """A header line with no line end (over the cap, or at end of input), left unconsumed.

    The parser steps past its first byte before searching for the next header: when the
    line starts with ``Content-Length:`` it must not be found again, and again.
    """


class _Phase(enum.Enum):
    HEADERS = "reading a header block"
    BODY = "reading a body"
    RESYNC = "skipping to the next header"
    ENDED = "input ended"


class _Wait(enum.Enum):
    """What a parsing step returns when it cannot finish yet, or never will."""

    NEED_MORE = "need more input"
    END = "end of input"


NEED_MORE = _Wait.NEED_MORE
END = _Wait.END


class FrameParser:
    """Turns pushed chunks of a byte stream into LSP message bodies, never trusting the peer.

    Use: :meth:`feed` each chunk read (:meth:`feed_eof` at end of input), then call
    :meth:`next_body` until it returns ``None``; :attr:`ended` then says whether input is
    over or more is needed. A body that turns out not to be JSON goes back via :meth:`reject`
    before the next :meth:`next_body`.
    """

    def __init__(self, *, max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._max_message_bytes = max_message_bytes
        self._buffer = bytearray()
        self._eof = False
        self._phase = _Phase.HEADERS
        self._header_lines = 0
        self._content_length: int | None = None
        self.framing_errors = 0
        self.skipped_bytes = 0  # total input discarded while resynchronising (for tests/logs)

    @property
    def ended(self) -> bool:
        """True once :meth:`next_body` has reported the end of input (it stays ended)."""
        return self._phase is _Phase.ENDED

    @property
    def buffered_bytes(self) -> int:
        """Input held but not yet returned (bounded: a body or header cap plus one chunk)."""
        return len(self._buffer)

    def feed(self, chunk: bytes) -> None:
        """Append bytes read from the peer."""
        self._buffer += chunk

    def feed_eof(self) -> None:
        """The peer's input has ended: what is buffered is all there will be."""
        self._eof = True

    def next_body(self) -> bytes | None:
        """The next well-framed body, or ``None``: more input needed, or :attr:`ended`."""
        while True:
            try:
                outcome = self._step()
            except FramingError as error:
                self._report(f"bad LSP framing from the client: {error}")
                if isinstance(error, _UnendedLine):
                    self._skip(1)
                self._start_resync()
                continue
            if outcome is _Wait.END:
                self._phase = _Phase.ENDED
            return None if isinstance(outcome, _Wait) else outcome

    def reject(self, body: bytes) -> None:
        """Give back a body that was not JSON; the next read resynchronises through it.

        A Content-Length that was too long swallowed the start of the next message, so the
        body is searched too (from its second byte, so its own header is not found again).
        """
        self._report(
            f"bad LSP message from the client: a {len(body)}-byte body is not JSON (wrong "
            "Content-Length?)"
        )
        self._buffer[:0] = body[1:]
        self._start_resync()

    def _report(self, problem: str) -> None:
        """One line per bad stretch: a warning (stderr too) for the first few, then INFO."""
        self.framing_errors += 1
        if self.framing_errors < MAX_FRAMING_WARNINGS:
            logger.warning("%s; skipping to the next header", problem)
        elif self.framing_errors == MAX_FRAMING_WARNINGS:
            logger.warning(
                "%s; skipping to the next header (further framing errors are logged at INFO)",
                problem,
            )
        else:
            logger.info("%s; skipping to the next header", problem)

    # -- framing -------------------------------------------------------------------------

    def _step(self) -> bytes | _Wait:
        """Advance as far as the buffer allows; raises :class:`FramingError` on bad framing."""
        if self._phase is _Phase.ENDED:
            return END
        if self._phase is _Phase.RESYNC:
            waiting = self._resync()
            if waiting is not None:
                return waiting
            self._phase = _Phase.HEADERS
        if self._phase is _Phase.HEADERS:
            header_end = self._read_headers()
            if header_end is not None:
                return header_end
            self._phase = _Phase.BODY
        return self._read_body()

    def _read_headers(self) -> _Wait | None:
        """Consume header lines up to the blank line (None), or say why it cannot yet."""
        while True:
            line = self._read_line()
            if isinstance(line, _Wait):
                return line
            if not line.strip():
                if self._header_lines == 0:
                    continue  # stray blank lines between messages are harmless
                if self._content_length is None:
                    raise FramingError("a header block without Content-Length")
                return None
            self._header_lines += 1
            if self._header_lines > MAX_HEADER_LINES:
                raise FramingError(f"more than {MAX_HEADER_LINES} header lines")
            name, value = _parse_header(line)
            if name == b"content-length":
                length = self._parse_length(value)
                if self._content_length is not None and self._content_length != length:
                    raise FramingError("two different Content-Length headers")
                self._content_length = length

    def _read_body(self) -> bytes | _Wait:
        length = self._content_length
        assert length is not None  # the header phase only ends with a length
        if len(self._buffer) < length:
            if not self._eof:
                return NEED_MORE
            logger.warning(
                "the client's input ended inside a message body (%d of %d bytes)",
                len(self._buffer),
                length,
            )
            return END
        with memoryview(self._buffer) as view, view[:length] as head:
            body = head.tobytes()
        del self._buffer[:length]
        self._start_message()
        return body

    def _parse_length(self, value: bytes) -> int:
        if not _DIGITS.fullmatch(value):
            raise FramingError(f"Content-Length {_shown(value)} is not a decimal byte count")
        length = int(value)
        if length == 0:
            raise FramingError("Content-Length 0 (an empty body)")
        if length > self._max_message_bytes:
            raise FramingError(
                f"Content-Length {length} exceeds the {self._max_message_bytes}-byte message limit"
            )
        return length

    def _start_message(self) -> None:
        self._phase = _Phase.HEADERS
        self._header_lines = 0
        self._content_length = None

    def _start_resync(self) -> None:
        self._start_message()
        self._phase = _Phase.RESYNC

    # -- buffered input --------------------------------------------------------------------

    def _read_line(self) -> bytes | _Wait:
        """One line without its line end (LF or CRLF), or why there is none yet."""
        end = self._buffer.find(b"\n", 0, MAX_HEADER_LINE_BYTES + 1)
        if end >= 0:
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            return line.removesuffix(b"\r")
        if len(self._buffer) > MAX_HEADER_LINE_BYTES:
            raise _UnendedLine(f"no line end within {MAX_HEADER_LINE_BYTES} bytes (binary input?)")
        if not self._eof:
            return NEED_MORE
        if self._buffer.strip():
            raise _UnendedLine("input ended inside a header")
        return END

    def _skip(self, count: int) -> None:
        self.skipped_bytes += min(count, len(self._buffer))
        del self._buffer[:count]

    def _resync(self) -> _Wait | None:
        """Discard input up to the next ``Content-Length:`` (None), or say why not yet.

        Searches case-insensitively and anywhere in a line: after a too-short length the next
        header follows the rest of a body on the same line. Keeps only the marker's length
        while searching.
        """
        found = self._buffer.lower().find(CONTENT_LENGTH_MARKER)
        if found >= 0:
            self._skip(found)
            return None
        if not self._eof:
            # A marker may be split across chunks: keep what could be its start.
            self._skip(max(0, len(self._buffer) - (len(CONTENT_LENGTH_MARKER) - 1)))
            return NEED_MORE
        self._skip(len(self._buffer))
        logger.warning("the client's input ended while skipping unframed bytes")
        return END


class FrameReader:
    """A :class:`FrameParser` pulled from a blocking byte stream: one body per call.

    For input the event loop cannot watch (a regular file, a stream without a descriptor);
    it reads only when the parser needs more, so it holds no more than the parser does.
    """

    def __init__(self, stream: ByteSource, *, max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._stream = stream
        self.parser = FrameParser(max_message_bytes=max_message_bytes)

    @property
    def framing_errors(self) -> int:
        """Framing errors reported so far."""
        return self.parser.framing_errors

    @property
    def skipped_bytes(self) -> int:
        """Input discarded while resynchronising so far."""
        return self.parser.skipped_bytes

    def next_body(self) -> bytes | None:
        """The next well-framed message body, blocking for input; ``None`` at end of input."""
        while True:
            body = self.parser.next_body()
            if body is not None or self.parser.ended:
                return body
            read1 = getattr(self._stream, "read1", None)
            chunk = read1(READ_CHUNK_BYTES) if read1 is not None else self._stream.read(1)
            if chunk:
                self.parser.feed(chunk)
            else:
                self.parser.feed_eof()

    def reject(self, body: bytes) -> None:
        """Give back a body that was not JSON (see :meth:`FrameParser.reject`)."""
        self.parser.reject(body)


def _parse_header(line: bytes) -> tuple[bytes, bytes]:
    match = _HEADER_LINE.fullmatch(line)
    if match is None:
        raise FramingError(f"a malformed header line {_shown(line)}")
    return match.group(1).lower(), match.group(2)


def _shown(raw: bytes, limit: int = 40) -> str:
    """A short, printable rendering of peer bytes for a log line."""
    text = raw[:limit].decode("ascii", "backslashreplace")
    return repr(text + ("…" if len(raw) > limit else ""))
