"""Plain text deltas cut straight out of the bytes, past the envelope a provider repeats.

A streamed answer is mostly plain text events, and a provider wraps every one of them in the
same bytes: ``data: {"id": "chatcmpl-…", …, "delta": {"content": `` before the text and
``}, "finish_reason": null}]}`` after it (Chat Completions), ``event: content_block_delta``,
``data: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ``
and ``}}`` (Messages). Once one such event was decoded the typed way, :func:`learn` records
that envelope; :meth:`TextEnvelope.scan` then takes each following event that is *exactly*
envelope + one JSON string + envelope, and decodes only the string — no SSE line handling,
no JSON object, no structs. The first block that does not fit (another kind of event, a
different envelope, a partial block at the end of the read) stops the scan and everything
from there goes the usual way, so the chunks are the same whichever path made them
(``tests/unit/llm/test_llm_text_envelope.py`` checks that against the general path).

Why a learned envelope is safe (the checks in :func:`learn`). ``prefix + token + suffix`` is
the event the typed decoder read as plain text ``text``, ``token`` is that text's JSON
encoding and occurs exactly once in it. Two probe events, ``prefix + "q" + suffix`` and
``prefix + "r" + suffix`` (``"s"`` instead of the one equal to the text), must read as
plain text ``q`` and ``r``. A bare letter is no JSON token, so each probe's letter parses
as one whole string; and as the text read back follows the probe, that string is the
event's text value itself — the value that wins, not a key, another field or an earlier
duplicate (with any of those, the text read would be the same for both probes). So
``prefix`` ends where the text's value starts, outside any string, and ``suffix`` starts
right after it. Putting any other single JSON string there changes that value and nothing
else — the keys, the other fields, the event's kind stay as they were — so the typed
decoder would read exactly that string as the text. The scan checks the rest: the data
line holds no line break (the envelope has none and a JSON string cannot), a blank line
ends the block, and the middle decodes as one JSON string (anything else — a number,
invalid UTF-8, a lone surrogate, trailing bytes — stops the scan).
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from relavium_lsp.llm.seam import LlmChunk, new_text_delta

TextOf = Callable[[bytes], "str | None"]

_decode_text = msgspec.json.Decoder(str).decode
_encode = msgspec.json.encode
_REFUSED = (msgspec.DecodeError, UnicodeDecodeError)
# A response learns at most this many envelopes: one per text block is usual, and a server
# whose envelope changes with every event (a per-event id or nonce) stops costing probes.
MAX_LEARNED = 16


class TextEnvelope:
    """The bytes every plain text event of one stream repeats around its text."""

    __slots__ = ("head", "tail")

    def __init__(self, head: bytes, tail: bytes) -> None:
        self.head = head  # the SSE block's start through the JSON before the text
        self.tail = tail  # the JSON after the text, to the end of the data line

    def matches(self, data: bytes, block_start: bytes) -> bool:
        """Whether an event's data has this envelope (``block_start``: the SSE lines before)."""
        prefix = self.head[len(block_start) :]
        return data.startswith(prefix) and data.endswith(self.tail)

    def scan(self, buffer: bytes, out: list[LlmChunk]) -> int:
        """Append the text delta of each leading block that fits; return where the rest starts.

        ``buffer`` starts at an SSE block boundary. Empty texts make no chunk, as on every
        other path.
        """
        head = self.head
        # The tail, the end of the data line and the blank line that ends the block.
        closing = self.tail + b"\n\n"
        skip = len(head)
        trim = len(self.tail)
        find = buffer.find
        opens = buffer.startswith
        append = out.append
        decode = _decode_text
        delta = new_text_delta
        start = 0
        # Offsets into one buffer, two prefix checks and one string decode per event: this
        # runs per delta. The data line ends at the first line break after the head.
        while opens(head, start):
            text_at = start + skip
            text_end = find(b"\n", text_at) - trim  # no line break: before text_at too
            if text_end < text_at or not opens(closing, text_end):
                break
            try:
                text = decode(buffer[text_at:text_end])
            except _REFUSED:
                break
            if text:
                append(delta(text))
            start = text_end + trim + 2
        return start


def learn(data: bytes, text: str, block_start: bytes, text_of: TextOf) -> TextEnvelope | None:
    """The envelope of one plain text event, if it is provably safe to reuse (module doc).

    ``data`` is the event's data, which ``text_of`` (the typed decoder) read as ``text``;
    ``block_start`` is what the SSE block holds before the data (``data: ``, or an event line
    and ``data: ``).
    """
    token = _encode(text)
    at = data.find(token)
    if at < 0 or data.find(token, at + 1) >= 0:
        return None  # escaped differently than we would, or not only once: no position
    prefix, suffix = data[:at], data[at + len(token) :]
    for probe in [probe for probe in ("q", "r", "s") if probe != text][:2]:
        if text_of(prefix + _encode(probe) + suffix) != probe:
            return None
    return TextEnvelope(block_start + prefix, suffix)
