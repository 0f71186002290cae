"""The AWS event stream framing (``application/vnd.amazon.eventstream``), decoded.

A message is ``total length (4) · headers length (4) · prelude CRC (4) · headers · payload ·
message CRC (4)``, integers big-endian; the prelude CRC covers the first eight bytes and the
message CRC everything before it (CRC-32, as ``zlib.crc32`` computes it). Headers are
``name length (1) · name · type (1) · value``. A message whose lengths are impossible or
whose CRC does not match is an :class:`EventStreamError`: the stream cannot be trusted past
it, so the adapter ends the answer with a transport error.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from typing import Any, NamedTuple

_PRELUDE = struct.Struct(">III")
_CRC = struct.Struct(">I")
_MINIMUM_MESSAGE = 16  # a prelude and a message CRC, no headers, no payload
MAX_MESSAGE = 24 * 1024 * 1024  # Bedrock's largest event is far smaller


class EventStreamError(ValueError):
    """The bytes are not a valid event stream."""


class EventMessage(NamedTuple):
    """One decoded message: its headers (``:event-type``, ``:message-type``, …) and payload."""

    headers: dict[str, Any]
    payload: bytes


def _header_value(data: bytes, at: int, kind: int) -> tuple[Any, int]:
    if kind == 0:
        return True, at
    if kind == 1:
        return False, at
    if kind == 2:
        return struct.unpack_from(">b", data, at)[0], at + 1
    if kind == 3:
        return struct.unpack_from(">h", data, at)[0], at + 2
    if kind == 4:
        return struct.unpack_from(">i", data, at)[0], at + 4
    if kind in (5, 8):  # long, timestamp (milliseconds)
        return struct.unpack_from(">q", data, at)[0], at + 8
    if kind in (6, 7):  # bytes, string
        (length,) = struct.unpack_from(">H", data, at)
        raw = data[at + 2 : at + 2 + length]
        if len(raw) != length:
            raise EventStreamError("a header value runs past the headers")
        return (raw.decode("utf-8", "replace") if kind == 7 else bytes(raw)), at + 2 + length
    if kind == 9:
        return uuid.UUID(bytes=bytes(data[at : at + 16])), at + 16
    raise EventStreamError(f"unknown header type {kind}")


def decode_headers(data: bytes) -> dict[str, Any]:
    """The headers block of a message."""
    headers: dict[str, Any] = {}
    at = 0
    try:
        while at < len(data):
            length = data[at]
            name = data[at + 1 : at + 1 + length].decode("utf-8", "replace")
            kind = data[at + 1 + length]
            headers[name], at = _header_value(data, at + 2 + length, kind)
    except (IndexError, struct.error):
        raise EventStreamError("the headers are truncated") from None
    return headers


class EventStreamDecoder:
    """Bytes in, whole messages out; partial messages wait for the next read.

    A stream repeats a handful of header blocks (one per event type), so each distinct
    block is decoded once and its headers reused (read-only) for every later message.
    """

    _KNOWN_HEADERS = 64

    def __init__(self) -> None:
        # The bytes of an incomplete message, kept as read and joined only once the message
        # can be complete (``_needed`` bytes), so a large message is not copied on every read.
        self._held: list[bytes] = []
        self._held_size = 0
        self._needed = 0
        self._headers: dict[bytes, dict[str, Any]] = {}

    @property
    def pending(self) -> int:
        """Bytes of an incomplete message held."""
        return self._held_size

    def feed(self, data: bytes) -> list[EventMessage]:
        """Every message these bytes complete; :class:`EventStreamError` on corrupt bytes."""
        if self._held:
            self._held.append(data)
            self._held_size += len(data)
            if self._held_size < self._needed:
                return []
            data = b"".join(self._held)
        # Plain bytes throughout: slicing them is the cheapest copy.
        buffer = bytes(data)
        messages: list[EventMessage] = []
        known = self._headers
        crc32 = zlib.crc32
        # The NamedTuple's own __new__ is a Python function; this is what it does, per event.
        new = tuple.__new__
        start = 0
        size = len(buffer)
        needed = 12
        while size - start >= 12:
            total, headers_length, prelude_crc = _PRELUDE.unpack_from(buffer, start)
            if crc32(buffer[start : start + 8]) != prelude_crc:
                raise EventStreamError("the prelude CRC does not match")
            if total < _MINIMUM_MESSAGE or total > MAX_MESSAGE or headers_length > total - 16:
                raise EventStreamError("impossible message lengths")
            end = start + total
            if size < end:
                needed = total
                break
            # Prelude CRC, headers, payload; its CRC carries on from the prelude's.
            body = buffer[start + 8 : end - 4]
            if crc32(body, prelude_crc) != _CRC.unpack_from(buffer, end - 4)[0]:
                raise EventStreamError("the message CRC does not match")
            block = body[4 : 4 + headers_length]
            headers = known.get(block)
            if headers is None:
                headers = decode_headers(block)
                if len(known) < self._KNOWN_HEADERS:
                    known[block] = headers
            messages.append(new(EventMessage, (headers, body[4 + headers_length :])))
            start = end
        rest = buffer[start:]
        self._held = [rest] if rest else []
        self._held_size = len(rest)
        self._needed = needed
        return messages


def encode_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One message with string headers (what Bedrock sends; tests and benchmarks use it)."""
    block = bytearray()
    for name, value in headers.items():
        raw_name, raw_value = name.encode(), value.encode()
        block += bytes([len(raw_name)]) + raw_name + b"\x07" + struct.pack(">H", len(raw_value))
        block += raw_value
    total = 16 + len(block) + len(payload)
    prelude = struct.pack(">II", total, len(block))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + bytes(block) + payload
    return message + struct.pack(">I", zlib.crc32(message))
