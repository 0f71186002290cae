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

# The structs are ``gc=False``: decoded once per delta and dropped at once, they hold only
# strings, ``None``, JSON values and each other, so they can never be part of a reference
# cycle — and untracked, they do not bring the collector round every few hundred deltas.


class _ChatDelta(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    # Only content (a string) and at most a role: any other key is not a plain text delta.
    content: str
    role: Any = None


class _ChatChoice(msgspec.Struct, gc=False):
    delta: _ChatDelta
    finish_reason: None = None


class _ChatTextEvent(msgspec.Struct, gc=False):
    choices: tuple[_ChatChoice]  # exactly one choice
    usage: None = None
    error: Any = msgspec.UNSET


class _MessagesTextDelta(msgspec.Struct, gc=False):
    type: Literal["text_delta"]
    text: str


class _MessagesTextEvent(msgspec.Struct, gc=False):
    type: Literal["content_block_delta"]
    delta: _MessagesTextDelta


_chat_text = msgspec.json.Decoder(_ChatTextEvent).decode
_messages_text = msgspec.json.Decoder(_MessagesTextEvent).decode
_REFUSED = (msgspec.DecodeError, UnicodeDecodeError)

# The scans below use ``bytes.find``, never ``in``: on CPython 3.11 ``needle in data`` first
# tries ``needle`` as an integer and raises (and clears) a TypeError with a formatted message
# before it searches — per delta, that was the largest single cost of these functions.


def chat_text(data: bytes) -> str | None:
    """The text of a Chat Completions chunk that holds only text, else ``None``."""
    if data.find(b"reasoning") >= 0 or data.find(b'"tool_calls"') >= 0:
        return None  # not plain text: a refused decode would cost more than this scan
    try:
        event = _chat_text(data)
    except _REFUSED:
        return None
    return event.choices[0].delta.content if event.error is msgspec.UNSET else None


def messages_text(data: bytes) -> str | None:
    """The text of a Messages ``content_block_delta`` / ``text_delta`` event, else ``None``."""
    if data.find(b'"text_delta"') < 0:
        return None
    try:
        return _messages_text(data).delta.text
    except _REFUSED:
        return None
