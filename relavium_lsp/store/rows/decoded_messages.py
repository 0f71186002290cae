"""Messages decoded from their rows, kept for the next turn (issue 25, per-turn overhead).

Every turn loads the tail of its history that fits the model's context budget, and with a
large window that is the whole recent conversation, decoded again each time: JSON, then
pydantic validation of every part. The rows barely change between two turns, so the store
keeps what it decoded, keyed by the *whole row*: a row that differs in any column (another
window's edit, a repaired file) is a different key and is decoded afresh, so nothing stale
is ever returned. Rolled-back rows are never selected, so they simply age out.

Bounded by the rows' text size (least recently used first out); one store (one connection,
one worker thread) owns one cache. Messages are append-only records that no reader edits,
which is what makes handing the same object to two readers safe.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.store.models import message_from_row

DEFAULT_MAX_BYTES = 4 * 1024 * 1024


def _text_bytes(row: tuple[Any, ...]) -> int:
    return sum(len(value) for value in row if isinstance(value, str))


class DecodedMessages:
    """A bounded cache of messages by their full row."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._entries: OrderedDict[tuple[Any, ...], SessionMessage] = OrderedDict()
        self._bytes = 0
        self._max_bytes = max_bytes

    def decode(self, row: Sequence[Any]) -> SessionMessage:
        """The message of ``row`` (a :data:`~relavium_lsp.store.models.MESSAGE_COLUMNS` row)."""
        key = tuple(row)
        cached = self._entries.get(key)
        if cached is not None:
            self._entries.move_to_end(key)
            return cached
        message = message_from_row(key)
        size = _text_bytes(key)
        if size <= self._max_bytes // 8:  # one huge message must not push out all the others
            self._entries[key] = message
            self._bytes += size
            while self._bytes > self._max_bytes:
                evicted, _ = self._entries.popitem(last=False)
                self._bytes -= _text_bytes(evicted)
        return message

    def __len__(self) -> int:
        return len(self._entries)
