"""Seam request → the Anthropic Messages body's bytes, carried over from the previous call.

Byte for byte what ``httpx`` sends for ``json=`` :func:`~relavium_lsp.llm.anthropic_wire.
request_body` (``tests/unit/llm/test_llm_carried_tails.py``), without building the whole body
on every call (issue 25): a turn re-sends the history of the turn before, so the wire
messages — runs of same-role seam messages merged into one, the ``tool_result`` blocks of a
user message first — that the previous call already encoded are taken from its text by their
offsets, and only the new ones are built. The cache breakpoints sit on the last block of the
newest two user messages, so the wire messages from the older of those two on are built
afresh each call, with their marks (a few messages at the end).

Only messages in the common stretch are carried (the same objects, or equal ones:
``run_carry.common_run``), and of those only the wire messages that begin in it and are not
its last (new messages may merge into that one). Messages dropped at the front may leave the
first carried wire message's predecessors as a wire message of their own; those are built.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from relavium_lsp.llm.anthropic_wire import (
    _EPHEMERAL,
    _HISTORY_BREAKPOINTS,
    CONTINUATION_PROMPT,
    _block,
    body_options,
)
from relavium_lsp.llm.catalog import max_output_tokens_for
from relavium_lsp.llm.run_carry import Positions, common_run
from relavium_lsp.llm.seam import LlmMessage, LlmRequest
from relavium_lsp.llm.wire_common import http_json

_Group = tuple[int, str, list[dict[str, Any]]]  # (first member's index, role, blocks)


def _groups(messages: Sequence[LlmMessage], start: int, end: int) -> list[_Group]:
    """The wire messages of ``messages[start:end]`` (merged, results first; no prompt)."""
    groups: list[_Group] = []
    for index in range(start, end):
        message = messages[index]
        role = "assistant" if message.role == "assistant" else "user"
        blocks = [b for b in (_block(part, role) for part in message.content) if b is not None]
        if not blocks:
            continue
        if groups and groups[-1][1] == role:
            groups[-1][2].extend(blocks)
        else:
            groups.append((index, role, blocks))
    for _, role, blocks in groups:
        if role == "user":
            blocks.sort(key=lambda block: block["type"] != "tool_result")
    return groups


def _json(role: str, blocks: list[dict[str, Any]]) -> str:
    return http_json({"role": role, "content": blocks})


@dataclass(frozen=True, eq=False)
class _Encoded:
    """A call's wire messages, unmarked, for the next call (absolute positions: see projection)."""

    messages: tuple[LlmMessage, ...]
    origin: int  # the absolute position of messages[0]
    where: Positions
    starts: list[int]  # each wire message's first seam message (absolute)
    roles: list[str]
    offsets: list[int]  # each wire message's offset in ``text`` (absolute), and the end
    text: str  # every wire message's JSON followed by a comma


_KEPT: list[_Encoded] = []  # least recently used first
_KEPT_LOCK = threading.Lock()
_MAX_KEPT = 8
_MAX_MESSAGES = 65_536
_MAX_CHARS = 16 * 1024 * 1024


def request_json(request: LlmRequest, *, prompt_caching: bool = True) -> bytes:
    """``request_body(request, prompt_caching=…)`` as the bytes ``httpx`` sends for it."""
    encoded = _encode(tuple(request.messages))
    groups = len(encoded.roles)
    # The wire messages from the older of the two newest user messages on carry the marks:
    # built afresh (the continuation prompt, a user message, counts when it is one of them).
    marked_from, users = groups, 0
    if prompt_caching:
        while marked_from > 0 and users < _HISTORY_BREAKPOINTS:
            marked_from -= 1
            users += encoded.roles[marked_from] == "user"
    pieces: list[str] = []
    if groups and encoded.roles[0] == "assistant":
        prompt: dict[str, Any] = {"type": "text", "text": CONTINUATION_PROMPT}
        if prompt_caching and users < _HISTORY_BREAKPOINTS:
            prompt["cache_control"] = dict(_EPHEMERAL)
        pieces.append(_json("user", [prompt]))
    base = encoded.offsets[0]
    plain = encoded.text[: encoded.offsets[marked_from] - base]
    if plain:
        pieces.append(plain[:-1])
    if marked_from < groups:
        messages = encoded.messages
        first = encoded.starts[marked_from] - encoded.origin
        for _, role, blocks in _groups(messages, first, len(messages)):
            if role == "user" and blocks[-1].get("type") not in ("thinking", "redacted_thinking"):
                blocks[-1]["cache_control"] = dict(_EPHEMERAL)
            pieces.append(_json(role, blocks))
    head = http_json(
        {
            "model": request.model,
            "max_tokens": request.max_tokens or max_output_tokens_for(request.model),
        }
    )[:-1]
    rest = http_json(body_options(request, prompt_caching))
    return f'{head},"messages":[{",".join(pieces)}],{rest[1:]}'.encode()


def _encode(messages: tuple[LlmMessage, ...]) -> _Encoded:
    """The unmarked wire messages of ``messages``, carried over from a call it continues."""
    previous, at = _find(messages)
    if previous is None:
        return _encoded_from(messages, 0, 0, Positions(messages, 0), [], [], [0], "", None)
    same = common_run(messages, previous.messages, at)
    absolute = previous.origin + at
    first = bisect_left(previous.starts, absolute)
    last = bisect_left(previous.starts, absolute + same) - 1
    where = previous.where.extended(messages, absolute, same)
    if last < first:  # no wire message begins in what is carried over
        return _encoded_from(messages, 0, absolute, where, [], [], [0], "", previous)
    # Messages before the first carried wire message (their own is gone with the front).
    lead = _groups(messages, 0, previous.starts[first] - absolute)
    lead_text = "".join(f"{_json(role, blocks)}," for _, role, blocks in lead)
    base = previous.offsets[0]
    start_at = previous.offsets[first] - len(lead_text)
    offsets = [start_at]
    for _, role, blocks in lead:
        offsets.append(offsets[-1] + len(_json(role, blocks)) + 1)
    offsets.pop()
    offsets.extend(previous.offsets[first:last])
    offsets.append(previous.offsets[last])
    text = lead_text + previous.text[previous.offsets[first] - base : previous.offsets[last] - base]
    starts = [absolute + index for index, _, _ in lead]
    starts.extend(previous.starts[first:last])
    roles = [role for _, role, _ in lead]
    roles.extend(previous.roles[first:last])
    return _encoded_from(
        messages,
        previous.starts[last] - absolute,
        absolute,
        where,
        starts,
        roles,
        offsets,
        text,
        previous,
    )


def _encoded_from(
    messages: tuple[LlmMessage, ...],
    index: int,
    origin: int,
    where: Positions,
    starts: list[int],
    roles: list[str],
    offsets: list[int],
    text: str,
    replaced: _Encoded | None,
) -> _Encoded:
    """Encode the wire messages of ``messages[index:]`` after the ones given.

    ``offsets`` ends with where the next one goes.
    """
    pieces = [text]
    end = offsets[-1]
    for first, role, blocks in _groups(messages, index, len(messages)):
        piece = f"{_json(role, blocks)},"
        pieces.append(piece)
        starts.append(origin + first)
        roles.append(role)
        end += len(piece)
        offsets.append(end)
    encoded = _Encoded(messages, origin, where, starts, roles, offsets, "".join(pieces))
    with _KEPT_LOCK:
        if replaced is not None and replaced in _KEPT:
            _KEPT.remove(replaced)
        if messages and len(messages) <= _MAX_MESSAGES and len(encoded.text) <= _MAX_CHARS // 2:
            _KEPT.append(encoded)
            total = sum(len(kept.messages) for kept in _KEPT)
            chars = sum(len(kept.text) for kept in _KEPT)
            while len(_KEPT) > _MAX_KEPT or total > _MAX_MESSAGES or chars > _MAX_CHARS:
                dropped = _KEPT.pop(0)
                total -= len(dropped.messages)
                chars -= len(dropped.text)
    return encoded


def _find(messages: tuple[LlmMessage, ...]) -> tuple[_Encoded | None, int]:
    if not messages:
        return None, 0
    with _KEPT_LOCK:
        for kept in reversed(_KEPT):
            at = kept.where.find(messages[0], kept.messages, kept.origin)
            if at is not None:
                return kept, at
    return None, 0
