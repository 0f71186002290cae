"""The pull-only LSP framer before the push mode, kept as a reference for property tests.

:class:`LegacyFrameReader` is ``relavium_lsp/server/framing.py``'s ``FrameReader`` as it was
(a blocking loop over a byte stream, its own buffer and resync), with two fixes the push
rewrite also made: after a header line with no line end (over the cap, or the input's last
bytes) it steps past the line's first byte before searching for the next header. Without
that, a ``Content-Length:`` starting such a line was found again forever (100 % CPU).

``tests/unit/server/test_framing_equivalence.py`` checks that the push parser and the new
pull reader give exactly what this one gives, on arbitrary streams in arbitrary chunks.
"""

from __future__ import annotations

import logging
import re

from relavium_lsp.server.framing import (
    CONTENT_LENGTH_MARKER,
    MAX_FRAMING_WARNINGS,
    MAX_HEADER_LINE_BYTES,
    MAX_HEADER_LINES,
    MAX_MESSAGE_BYTES,
    READ_CHUNK_BYTES,
    ByteSource,
    FramingError,
)

logger = logging.getLogger(__name__)

_HEADER_LINE = re.compile(rb"^([!-9;-~]+):[ \t]*([ -~]*?)[ \t]*$")
_DIGITS = re.compile(rb"^[0-9]{1,20}$")


class LegacyFrameReader:
    """The pull-only reader as it was, plus the two progress fixes (see the module doc)."""

    def __init__(self, stream: ByteSource, *, max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._stream = stream
        self._max_message_bytes = max_message_bytes
        self._buffer = bytearray()
        self._eof = False
        self._resync_first = False
        self.framing_errors = 0
        self.skipped_bytes = 0  # total input discarded while resynchronising (for tests/logs)

    def next_body(self) -> bytes | None:
        """The next well-framed message body; ``None`` at end of input."""
        while True:
            if self._resync_first:
                self._resync_first = False
                if not self._resync():
                    return None
            try:
                return self._next_framed_body()
            except FramingError as error:
                self._report(f"bad LSP framing from the client: {error}")
                if str(error).startswith(("no line end", "input ended inside a header")):
                    self.skipped_bytes += 1
                    del self._buffer[:1]
                self._resync_first = True

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
        self._resync_first = True

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

    def _next_framed_body(self) -> bytes | None:
        """Read a header block and its body; raises :class:`FramingError` on bad framing."""
        content_length: int | None = None
        header_lines = 0
        while True:
            line = self._read_line()
            if line is None:
                if header_lines and not self._eof_quietly():
                    raise FramingError("input ended inside a header")
                return None
            if not line.strip():
                if header_lines == 0:
                    continue  # stray blank lines between messages are harmless
                break
            header_lines += 1
            if header_lines > MAX_HEADER_LINES:
                raise FramingError(f"more than {MAX_HEADER_LINES} header lines")
            name, value = _parse_header(line)
            if name == b"content-length":
                length = self._parse_length(value)
                if content_length is not None and content_length != length:
                    raise FramingError("two different Content-Length headers")
                content_length = length
        if content_length is None:
            raise FramingError("a header block without Content-Length")
        return self._read_exactly(content_length)

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

    # -- buffered input --------------------------------------------------------------------

    def _fill(self) -> bool:
        """Append what the stream has (blocking for at least one byte); False at end of input."""
        if self._eof:
            return False
        read1 = getattr(self._stream, "read1", None)
        chunk = read1(READ_CHUNK_BYTES) if read1 is not None else self._stream.read(1)
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    def _eof_quietly(self) -> bool:
        """At end of input with nothing but whitespace left: a normal close."""
        return not bytes(self._buffer).strip()

    def _read_line(self) -> bytes | None:
        """One line without its line end (LF or CRLF); None at end of input."""
        while True:
            end = self._buffer.find(b"\n", 0, MAX_HEADER_LINE_BYTES + 1)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line.removesuffix(b"\r")
            if len(self._buffer) > MAX_HEADER_LINE_BYTES:
                raise FramingError(
                    f"no line end within {MAX_HEADER_LINE_BYTES} bytes (binary input?)"
                )
            if not self._fill():
                if self._buffer.strip():
                    raise FramingError("input ended inside a header")
                return None

    def _read_exactly(self, length: int) -> bytes | None:
        while len(self._buffer) < length:
            if not self._fill():
                logger.warning(
                    "the client's input ended inside a message body (%d of %d bytes)",
                    len(self._buffer),
                    length,
                )
                return None
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        return body

    def _resync(self) -> bool:
        """Discard input up to the next ``Content-Length:``; False if input ended first.

        Searches case-insensitively and anywhere in a line: after a too-short length the next
        header follows the rest of a body on the same line. Keeps at most one chunk buffered.
        """
        keep = len(CONTENT_LENGTH_MARKER) - 1
        while True:
            found = bytes(self._buffer).lower().find(CONTENT_LENGTH_MARKER)
            if found >= 0:
                self.skipped_bytes += found
                del self._buffer[:found]
                return True
            if len(self._buffer) > keep:
                self.skipped_bytes += len(self._buffer) - keep
                del self._buffer[: len(self._buffer) - keep]
            if not self._fill():
                self.skipped_bytes += len(self._buffer)
                self._buffer.clear()
                logger.warning("the client's input ended while skipping unframed bytes")
                return False


def _parse_header(line: bytes) -> tuple[bytes, bytes]:
    match = _HEADER_LINE.fullmatch(line)
    if match is None:
        raise FramingError(f"a malformed header line {_shown(line)}")
    return match.group(1).lower(), match.group(2)


def _shown(raw: bytes, limit: int = 40) -> str:
    """A short, printable rendering of peer bytes for a log line."""
    text = raw[:limit].decode("ascii", "backslashreplace")
    return repr(text + ("…" if len(raw) > limit else ""))
