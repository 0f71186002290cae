"""Typed decoding of the one event shape that is nearly every event: a plain text delta.

A streamed answer is mostly events that carry nothing but a piece of text. Decoding those
straight into small msgspec structs skips building dicts for fields the adapters ignore and
the chain of lookups that recognises them. Each decoder here accepts exactly the events the
adapters' general path would read as "only text" and refuses everything else (returning
``None``), so the general path still sees every other event and the chunks are identical
(``tests/unit/llm/test_llm_fast_decoding.py`` checks that on every recorded stream).
"""

from __future__ import annotations

from typing import Any

import msgspec

# The structs are ``gc=False``: decoded once per delta and dropped at once, they hold only
# strings, ``None``, JSON values and each other, so they can never be part of a reference
# cycle — and untracked, they do not bring the collector round every few hundred deltas.


class _ChatDelta(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    # A plain text delta holds content (a string) and at most a role. The other keys a delta
    # commonly has are decoded too — rather than refused, which costs an exception — and
    # any of them present sends the event to the general path (see chat_text).
    content: Any = None
    role: Any = None
    reasoning_content: Any = msgspec.UNSET
    reasoning: Any = msgspec.UNSET
    tool_calls: Any = msgspec.UNSET
    refusal: Any = msgspec.UNSET
    function_call: Any = msgspec.UNSET


class _ChatChoice(msgspec.Struct, gc=False):
    delta: _ChatDelta
    finish_reason: None = None


class _ChatTextEvent(msgspec.Struct, gc=False):
    choices: tuple[_ChatChoice]  # exactly one choice
    usage: None = None
    error: Any = msgspec.UNSET


class _MessagesDelta(msgspec.Struct, gc=False):
    # Any content block delta (text, thinking, signature, tool arguments) or a message
    # delta's: decoded, not refused (an exception costs more), then told apart by ``type``.
    type: Any = None
    text: Any = None


class _MessagesEvent(msgspec.Struct, gc=False):
    # Every Messages event decodes: unknown fields are skipped, ``delta`` may be absent.
    type: Any = None
    delta: _MessagesDelta | None = None


_chat_text = msgspec.json.Decoder(_ChatTextEvent).decode
_messages_text = msgspec.json.Decoder(_MessagesEvent).decode
_REFUSED = (msgspec.DecodeError, UnicodeDecodeError)

# ``bytes.find``, never ``in``: on CPython 3.11 ``needle in data`` first tries ``needle`` as
# an integer and raises (and clears) a TypeError with a formatted message before it searches.
_UNSET = msgspec.UNSET


def chat_text(data: bytes) -> str | None:
    """The text of a Chat Completions chunk that holds only text, else ``None``."""
    try:
        event = _chat_text(data)
    except _REFUSED:
        return None
    if event.error is not _UNSET:
        return None
    delta = event.choices[0].delta
    content = delta.content
    if (
        type(content) is not str
        or delta.reasoning_content is not _UNSET
        or delta.reasoning is not _UNSET
        or delta.tool_calls is not _UNSET
        or delta.refusal is not _UNSET
        or delta.function_call is not _UNSET
    ):
        return None
    return content


def messages_text(data: bytes) -> str | None:
    """The text of a Messages ``content_block_delta`` / ``text_delta`` event, else ``None``."""
    try:
        event = _messages_text(data)
    except _REFUSED:
        return None
    delta = event.delta
    if (
        delta is None
        or event.type != "content_block_delta"
        or delta.type != "text_delta"
        or type(delta.text) is not str
    ):
        return None
    return delta.text
