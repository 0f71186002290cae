r"""An incremental Server-Sent Events parser (the WHATWG ``text/event-stream`` format).

Both provider adapters stream SSE. :class:`LineSplitter` cuts the raw byte stream into lines
(``\n``, ``\r\n`` and a lone ``\r`` are the only terminators — not
:meth:`httpx.Response.aiter_lines`, which uses ``str.splitlines`` and would also split inside
JSON strings holding U+2028, U+0085 and friends), and :class:`SseDecoder` turns lines into
an :class:`SseEvent` whenever a blank line completes one; :class:`SseStream` chains the two
(bytes in, events out). Comments (``:`` lines, used as keep-alives) are ignored, ``data``
lines are joined with ``\n``, and one space after the colon is dropped, as the standard
says.

One deliberate leniency: an event still pending when the stream ends is dispatched by
:meth:`SseDecoder.flush` instead of being discarded, because several OpenAI-compatible
servers end their last ``data: [DONE]`` line without the trailing blank line.

:meth:`SseStream.feed_data` is the adapters' fast path: it returns only each event's data
and, for the shapes providers send nearly always — ``data: {json}`` or ``event: name`` then
``data: {json}``, ending in a blank line, no CR anywhere — cuts them out of the bytes
without decoding text or going line by line. Anything else in a block (comments, ids,
several data lines, CRs) goes through the general parser, with the same result.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class SseEvent(NamedTuple):
    """One dispatched event: its type (``message`` by default), data and last event id."""

    event: str
    data: str
    id: str | None = None


class SseDecoder:
    """Turns lines into events; keeps the state of the event being assembled."""

    __slots__ = ("_data", "_event", "_last_id", "_started")

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._last_id: str | None = None
        self._started = False

    def feed_line(self, line: str) -> SseEvent | None:
        """Consume one line; return the event a blank line completes, else ``None``."""
        if not self._started:
            self._started = True
            if line.startswith("\ufeff"):
                line = line[1:]
        if not line:
            return self._dispatch()
        # The common case first: streams are almost entirely ``data:`` lines.
        if line.startswith("data:"):
            self._data.append(line[6:] if line.startswith("data: ") else line[5:])
            return None
        if line[0] == ":":
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\x00" not in value:
                self._last_id = value
        # ``retry`` and unknown fields carry nothing a provider adapter needs.
        return None

    def flush(self) -> SseEvent | None:
        """At end of stream: dispatch an event that lacked its final blank line."""
        return self._dispatch()

    def mark_started(self) -> None:
        """The stream has begun elsewhere: a byte-order mark can no longer open it."""
        self._started = True

    def _dispatch(self) -> SseEvent | None:
        data = self._data
        if not data:
            self._event = ""
            return None
        event = SseEvent(
            event=self._event or "message",
            data=data[0] if len(data) == 1 else "\n".join(data),
            id=self._last_id,
        )
        self._event = ""
        self._data = []
        return event


class LineSplitter:
    """Cuts a byte stream into decoded lines, carrying partial lines across chunks."""

    __slots__ = ("_partial", "_skip_newline")

    def __init__(self) -> None:
        self._partial = b""
        # A chunk that ended in CR already terminated its line; an LF opening the next
        # chunk is the rest of that CRLF and must not make a second (blank) line.
        self._skip_newline = False

    def feed(self, chunk: bytes) -> list[str]:
        """Consume bytes; return every line they complete (terminators removed)."""
        if self._skip_newline:
            self._skip_newline = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if not chunk:
            return []
        data = self._partial + chunk if self._partial else chunk
        if data.find(b"\r") >= 0:  # not ``in``: see fast_events
            ends_with_cr = data[-1:] == b"\r"
            if ends_with_cr:
                data = data[:-1]
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if ends_with_cr:
                data += b"\n"
                self._skip_newline = True
        cut = data.rfind(b"\n")
        if cut < 0:
            self._partial = data
            return []
        self._partial = data[cut + 1 :]
        # Everything up to the last LF ends on a line boundary, so it holds only whole UTF-8
        # sequences and decodes in one go.
        return data[:cut].decode("utf-8", "replace").split("\n")

    def flush(self) -> list[str]:
        """At end of stream: the unterminated last line, if any."""
        partial, self._partial = self._partial, b""
        return [partial.decode("utf-8", "replace")] if partial else []


EventData = str | bytes
# The shapes providers send nearly always, cut out of the bytes in one C call: ``data: {json}``,
# or ``event: name`` then ``data: {json}``, then the blank line that ends the event.
_COMMON_EVENT = re.compile(rb"(?:event: [^\n]*\n)?data: ([^\n]*)\n\n")


class SseStream:
    """Bytes in, events out: a :class:`LineSplitter` feeding an :class:`SseDecoder`."""

    __slots__ = ("_decoder", "_fast", "_lines", "_pending")

    def __init__(self, *, fast: bool = True) -> None:
        self._lines = LineSplitter()
        self._decoder = SseDecoder()
        # The reads holding an event not yet complete (never a blank line inside them).
        self._pending: list[bytes] = []
        # Off for good once a CR is seen: CR and CRLF line ends need the line splitter.
        self._fast = fast

    def feed_data(self, chunk: bytes) -> list[EventData]:
        """The data of every event the bytes complete (UTF-8 bytes on the fast path)."""
        if not self._fast or chunk.find(b"\r") >= 0:
            return self._slow_data(chunk)
        pending = self._pending
        if pending:
            # Until a blank line can have arrived, only keep the read: going over a long event
            # (Responses' ``output_text.done`` repeats the whole answer) on every read of it
            # would cost its length each time.
            if chunk.find(b"\n\n") < 0 and not (chunk[:1] == b"\n" and pending[-1][-1:] == b"\n"):
                pending.append(chunk)
                return []
            pending.append(chunk)
            buffer = b"".join(pending)
        else:
            buffer = chunk
        found: list[EventData] = []
        match = _COMMON_EVENT.match
        size = len(buffer)
        start = 0  # always between two events: at an event's first line or at a blank line
        while start < size:
            event = match(buffer, start)
            if event is not None:
                found.append(event[1])
                start = event.end()
            elif buffer[start] == 0x0A:  # a blank line between events: nothing to dispatch
                start += 1
            else:
                end = buffer.find(b"\n\n", start)
                if end < 0:
                    break  # the event is not complete yet
                found.extend(self._general(buffer[start : end + 2]))
                start = end + 2
        rest = buffer[start:]
        self._pending = [rest] if rest else []
        if start:
            # A byte-order mark can only open the stream, and these bytes (an event or just
            # a blank line) already did.
            self._decoder.mark_started()
        return found

    def _general(self, block: bytes) -> list[EventData]:
        events = (self._decoder.feed_line(line) for line in self._lines.feed(block))
        return [event.data for event in events if event is not None]

    def _slow_data(self, chunk: bytes) -> list[EventData]:
        self._fast = False
        pending, self._pending = b"".join(self._pending), []
        return [event.data for event in self.feed(pending + chunk)]

    def finish_data(self) -> list[EventData]:
        """At end of stream: the data of whatever the last, unterminated lines complete."""
        events: list[SseEvent] = []
        if self._pending:
            pending, self._pending = b"".join(self._pending), []
            self._fast = False
            events = self.feed(pending)
        return [event.data for event in (*events, *self.finish())]

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Every event the bytes complete."""
        feed_line = self._decoder.feed_line
        events: list[SseEvent] = []
        for line in self._lines.feed(chunk):
            event = feed_line(line)
            if event is not None:
                events.append(event)
        return events

    def finish(self) -> list[SseEvent]:
        """At end of stream: whatever the last, unterminated lines complete."""
        events = [e for e in map(self._decoder.feed_line, self._lines.flush()) if e is not None]
        tail = self._decoder.flush()
        return [*events, tail] if tail is not None else events
