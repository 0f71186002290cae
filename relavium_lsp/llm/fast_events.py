"""Typed decoding of the one event shape that is nearly every event: a plain text delta.

A streamed answer is mostly events that carry nothing but a piece of text. Decoding those
straight into small msgspec structs skips building dicts for fields the adapters ignore and
the chain of lookups that recognises them. Each decoder here accepts exactly the events the
adapters' general path would read as "only text" and refuses everything else (returning
``None``), so the general path still sees every other event and the chunks are identical
(``tests/unit/llm/test_llm_fast_decoding.py`` checks that on every recorded stream).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec


class _ChatDelta(msgspec.Struct, forbid_unknown_fields=True):
    # Only content (a string) and at most a role: any other key is not a plain text delta.
    content: str
    role: Any = None


class _ChatChoice(msgspec.Struct):
    delta: _ChatDelta
    finish_reason: None = None


class _ChatTextEvent(msgspec.Struct):
    choices: tuple[_ChatChoice]  # exactly one choice
    usage: None = None
    error: Any = msgspec.UNSET


class _MessagesTextDelta(msgspec.Struct):
    type: Literal["text_delta"]
    text: str


class _MessagesTextEvent(msgspec.Struct):
    type: Literal["content_block_delta"]
    delta: _MessagesTextDelta


_chat_text = msgspec.json.Decoder(_ChatTextEvent).decode
_messages_text = msgspec.json.Decoder(_MessagesTextEvent).decode
_REFUSED = (msgspec.DecodeError, UnicodeDecodeError)


def chat_text(data: bytes) -> str | None:
    """The text of a Chat Completions chunk that holds only text, else ``None``."""
    if b"reasoning" in data or b'"tool_calls"' in data:
        return None  # not plain text: a refused decode would cost more than this scan
    try:
        event = _chat_text(data)
    except _REFUSED:
        return None
    return event.choices[0].delta.content if event.error is msgspec.UNSET else None


def messages_text(data: bytes) -> str | None:
    """The text of a Messages ``content_block_delta`` / ``text_delta`` event, else ``None``."""
    if b'"text_delta"' not in data:
        return None
    try:
        return _messages_text(data).delta.text
    except _REFUSED:
        return None
