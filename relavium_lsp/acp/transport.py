"""Newline-delimited JSON-RPC over the agent's stdio, bounded and never trusted (issue 35).

The SDK's stdio transport accumulates a line of any length in memory, decodes it with
``json.loads`` (deep nesting: a ``RecursionError`` traceback per line) and hands its
connection whatever came out: a JSON array, or a response whose ``id`` is a list, raised
inside the connection's receive loop and ended the agent. This transport is handed to the
SDK's :class:`~acp.connection.Connection` in its place (the connection accepts any object
with ``send`` / ``receive`` / ``close``) and only ever returns a well-shaped JSON-RPC object:

* a line is at most :data:`~relavium_lsp.json_guard.MAX_MESSAGE_BYTES`; a longer one is
  read past (never held) and logged;
* it is decoded by :func:`~relavium_lsp.json_guard.decode_message` (size and nesting bounded
  before decoding);
* an object that is not a JSON-RPC message — not an object, an ``id`` that is not an
  integer or string, a ``method`` that is not a string, an ``error`` that is not an object —
  is answered ``InvalidRequest`` when it carries a usable id (a request the client waits
  on), otherwise logged. Logging is rate-limited per connection.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from relavium_lsp.json_guard import (
    MAX_MESSAGE_BYTES,
    RateLimitedLog,
    UntrustedJson,
    decode_message,
    top_level_member,
)

logger = logging.getLogger(__name__)

INVALID_REQUEST = -32600
# The asyncio reader's buffer: a longer line is read in pieces of about this size.
READ_LIMIT_BYTES = 1024 * 1024


class BoundedNdjsonTransport:
    """The ACP connection's message transport over an asyncio reader and writer."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._max_message_bytes = max_message_bytes
        self._write_lock = asyncio.Lock()
        self._complaints = RateLimitedLog(logger)

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as a line (ASCII JSON: a lone surrogate cannot break the write)."""
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode("ascii")
        async with self._write_lock:
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        """The next well-shaped message, or None at end of input."""
        while True:
            line = await self._read_line()
            if line is None:
                return None
            line = line.strip()
            if not line:
                continue
            message = await self._accept(line)
            if message is not None:
                return message

    async def close(self) -> None:
        """Nothing to release: the caller owns the streams."""

    async def _read_line(self) -> bytes | None:
        """One line without its end (None at end of input); an over-long one as empty."""
        chunks: list[bytes] = []
        held = 0
        too_long = False
        while True:
            try:
                piece = await self._reader.readuntil(b"\n")
                ended = True
            except asyncio.LimitOverrunError as error:
                piece = await self._reader.readexactly(error.consumed)
                ended = False
            except asyncio.IncompleteReadError as error:
                piece = error.partial
                if not piece and not chunks and not too_long:
                    return None
                ended = True
            held += len(piece)
            if held > self._max_message_bytes:
                too_long = True
                chunks.clear()  # read past, never held
            elif not too_long:
                chunks.append(piece)
            if ended:
                break
        if too_long:
            self._complaints.log(
                logging.INFO,
                "a line from the client was longer than %d bytes; skipped",
                self._max_message_bytes,
            )
            return b""
        return b"".join(chunks)

    async def _accept(self, line: bytes) -> dict[str, Any] | None:
        """The decoded message if it is one the connection can handle; else answer or log."""
        try:
            message: Any = decode_message(line, max_bytes=self._max_message_bytes)
        except UntrustedJson as error:
            request_id = top_level_member(line, "id") if error.too_deep else None
            method = top_level_member(line, "method") if error.too_deep else None
            await self._refuse(
                request_id if isinstance(method, str) else None,
                f"the message {error.reason}",
            )
            return None
        problem = _shape_problem(message)
        if problem is None:
            return message  # type: ignore[no-any-return]
        request_id = message.get("id") if isinstance(message, dict) else None
        answerable = "method" in message if isinstance(message, dict) else False
        await self._refuse(request_id if answerable and _usable_id(request_id) else None, problem)
        return None

    async def _refuse(self, request_id: object, reason: str) -> None:
        self._complaints.log(
            logging.INFO,
            "a %s from the client was refused: %s",
            "request" if request_id is not None else "message",
            reason,
        )
        if request_id is None:
            return
        await self.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": INVALID_REQUEST, "message": f"Invalid request: {reason}"},
            }
        )


def _usable_id(value: object) -> bool:
    return isinstance(value, int | str) and not isinstance(value, bool)


def _shape_problem(message: object) -> str | None:
    """Why ``message`` is not a JSON-RPC message the SDK's connection can take, or None."""
    if not isinstance(message, dict):
        return f"not a JSON-RPC message (a JSON {type(message).__name__})"
    if "id" in message and message["id"] is not None and not _usable_id(message["id"]):
        return "its id is neither an integer nor a string"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "its method is not a string"
        return None
    if "id" not in message:
        return "neither a request, a notification nor a response"
    if "error" in message and not isinstance(message["error"], dict):
        return "its error is not an object"
    return None
