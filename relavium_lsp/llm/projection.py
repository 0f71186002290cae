r"""Stored messages → the provider-neutral messages a model call sends.

Rules, in order:

1. Only the newest compaction marker counts: every message at or before its
   ``droppedThroughSequence`` is left out, and the marker's text becomes the opening user
   message ``"Summary of earlier conversation:\n…"`` (a trim marker without text becomes a
   one-line note that earlier messages were left out). A marker written inside a turn holds
   a whole view instead (``CompactionMarker.view``): its parts become those messages, in
   order. Every other ``system`` row — interruption markers included — is dropped.
2. Each assistant message that called tools is followed by exactly one ``tool`` message
   holding one result per call, in call order, then any media the tools returned (MCP
   images; the wire mappings put them after the results). A call whose result was never
   stored (the process died, the turn was interrupted) gets a synthetic error result, so no
   provider ever sees a dangling call; a result whose call is not in view is dropped.
3. Media handles are resolved to inline base64 from the media store (a missing blob becomes
   a short text note rather than a failed call).
4. Messages left without content are skipped. Role alternation is **not** enforced here:
   the Anthropic wire mapping merges same-role neighbours (Chat Completions needs none).

The engine holds the current turn's messages in flight — with reasoning signatures and
inline media that the durable form cannot carry. Pass those as ``in_flight`` (keyed by
message id) and they are used instead of the stored content, so Anthropic receives the
signed thinking blocks it requires within a tool loop.
"""

from __future__ import annotations

import base64
import threading
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice

from relavium_lsp.contracts.content import (
    Base64Source,
    ContentPart,
    DurableContentPart,
    DurableMediaPart,
    DurableReasoningPart,
    MediaPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    estimate_tokens,
    plain_text,
)
from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.llm.identity_memo import IdentityMemo
from relavium_lsp.llm.run_carry import Positions, common_run
from relavium_lsp.llm.seam import LlmMessage
from relavium_lsp.store.media import MediaStore

SUMMARY_PREFIX = "Summary of earlier conversation:\n"
TRIMMED_NOTE = "(Earlier messages of this conversation were left out to fit the context window.)"
INTERRUPTED_RESULT = (
    "This tool call never completed: the turn was interrupted before a result was recorded."
)


def _resolve(part: DurableContentPart | ContentPart, media: MediaStore) -> ContentPart:
    if isinstance(part, DurableReasoningPart):
        return ReasoningPart(text=part.text, redacted=part.redacted)
    if isinstance(part, DurableMediaPart):
        try:
            data = media.get(part.source.handle)
        except KeyError:
            label = part.name or part.mime_type
            return TextPart(text=f"[attachment {label} is no longer available]")
        encoded = base64.b64encode(data).decode("ascii")
        return MediaPart(
            mime_type=part.mime_type, source=Base64Source(data=encoded), name=part.name
        )
    return part


def _visible(
    messages: Sequence[SessionMessage],
) -> tuple[list[SessionMessage], SessionMessage | None]:
    """Messages after the newest compaction boundary, and the marker that replaces the rest."""
    ordered = sorted(messages, key=lambda message: message.sequence_number)
    marker: SessionMessage | None = None
    for message in ordered:
        if message.role == "system" and message.compaction is not None:
            marker = message
    if marker is None or marker.compaction is None:
        return [m for m in ordered if m.role != "system"], None
    boundary = marker.compaction.dropped_through_sequence
    kept = [m for m in ordered if m.role != "system" and m.sequence_number > boundary]
    return kept, marker


def _parts(
    message: SessionMessage,
    media: MediaStore,
    in_flight: Mapping[str, Sequence[ContentPart]],
) -> list[ContentPart]:
    live = in_flight.get(message.id)
    source: Sequence[DurableContentPart | ContentPart] = (
        live if live is not None else message.content
    )
    return [_resolve(part, media) for part in source]


# Projected units of unchanged messages, by the identity of the stored message objects
# (docs/design.md §2.4): each turn projects only what is new since the turn before.
# Bounded by count and by the text they hold (an entry keeps its messages alive).
_UNITS: IdentityMemo[tuple[LlmMessage, ...]] = IdentityMemo(
    max_entries=8_192,
    weigh=lambda unit: sum(estimate_tokens(message.content) for message in unit) * 4,
    max_weight=16 * 1024 * 1024,
)


def project_messages(
    messages: Sequence[SessionMessage],
    media: MediaStore,
    *,
    in_flight: Mapping[str, Sequence[ContentPart]] | None = None,
) -> tuple[LlmMessage, ...]:
    """Project stored messages (any order, any window of history) for a model call.

    The history is cut into units — a user or assistant message with the tool messages right
    after it — and each unit projects on its own, so a unit seen before (the same message
    objects) reuses its projection and the very same :class:`LlmMessage` objects, whose
    request JSON the adapters keep in turn. Units with media (resolved from the media store
    each time) or with in-flight content are always projected afresh.

    A history in the order the tail walk returns it (an optional compaction marker, then the
    rest oldest first) is projected by :func:`_project_tail`, which carries the previous
    call's projection over to a call that continues its history (issue 25).
    """
    if not in_flight and messages:
        projected = _project_tail(messages, media)
        if projected is not None:
            return projected
    return project_afresh(messages, media, in_flight=in_flight)


def project_afresh(
    messages: Sequence[SessionMessage],
    media: MediaStore,
    *,
    in_flight: Mapping[str, Sequence[ContentPart]] | None = None,
) -> tuple[LlmMessage, ...]:
    """:func:`project_messages` without carrying anything over (the rules, spelled out)."""
    live = in_flight or {}
    kept, marker = _visible(messages)
    projected: list[LlmMessage] = list(_summary(marker, media))
    index = 0
    while index < len(kept):
        end = index + 1
        while end < len(kept) and kept[end].role == "tool":
            end += 1
        unit = kept[index:end]
        index = end
        if unit[0].role == "tool":
            continue  # results are gathered by the assistant message that asked for them
        # Only reusable units are ever kept; in-flight content may name a kept one.
        known = _UNITS.get(unit) if not live or _settled(unit, live) else None
        if known is None:
            known = _project_unit(unit, media, live)
            if _settled(unit, live) and _without_media(unit):
                _UNITS.put(unit, known)
        projected.extend(known)
    return tuple(projected)


@dataclass(frozen=True, eq=False)
class _Tail:
    """A projected history tail, for the next call that continues it (:func:`_project_tail`).

    Positions are absolute (a row's index counts from the first row this history's chain of
    tails ever held), so a later tail reuses slices of these lists as they are.
    """

    marker: SessionMessage | None  # the compaction marker the history opened with
    summary: tuple[LlmMessage, ...]
    rows: tuple[SessionMessage, ...]  # the rest: oldest first, no compaction marker
    origin: int  # the absolute position of rows[0]
    where: Positions  # the rows' absolute positions, by identity
    starts: list[int]  # each unit's first row (absolute)
    offsets: list[int]  # each unit's first projected message (absolute)
    projected: list[LlmMessage]  # every unit's messages, the summary left out
    projected_origin: int  # the absolute position of projected[0]
    with_media: list[int]  # the units (their starts) projected afresh every call


# Recent tails (least recently used first), each about one session's history: bounded by
# count and by the rows they hold.
_TAILS: list[_Tail] = []
_TAILS_LOCK = threading.Lock()
_MAX_TAILS = 8
_MAX_TAIL_ROWS = 65_536


def _project_tail(
    messages: Sequence[SessionMessage], media: MediaStore
) -> tuple[LlmMessage, ...] | None:
    """The projection of a walk-ordered tail, carried over from a tail it continues.

    None when ``messages`` is not in that order (a compaction marker first or not at all,
    then the rest by ascending sequence, after the marker's boundary, with no other marker):
    the caller projects afresh. The units of the previous tail that this one still holds
    whole keep their projected messages, by C-level slicing; only the units after them (and
    any with media) are projected. What is carried over is decided by identity, so the result
    is exactly :func:`project_afresh`'s (``tests/unit/llm/test_llm_request_memo.py``).
    """
    first = messages[0]
    marker = first if first.role == "system" and first.compaction is not None else None
    rows = tuple(islice(messages, 1, None)) if marker is not None else tuple(messages)
    if not rows:
        return None
    previous, at = _find_tail(marker, rows[0])
    if previous is None:
        return _project_from(
            marker,
            _summary(marker, media),
            rows,
            0,
            0,
            [],
            [],
            [],
            0,
            [],
            media,
            Positions(rows, 0),
        )
    same = common_run(rows, previous.rows, at)
    absolute = previous.origin + at
    first_unit = bisect_left(previous.starts, absolute)
    last_unit = bisect_left(previous.starts, absolute + same) - 1
    where = previous.where.extended(rows, absolute, same)
    if last_unit < first_unit:  # no unit begins in what is carried over
        return _project_from(
            marker, previous.summary, rows, 0, absolute, [], [], [], 0, [], media, where, previous
        )
    # Carried over: the units that begin in the common run, but for the last one (the rows
    # after it may have grown it), which is projected again with the new rows.
    base = previous.offsets[first_unit]
    upto = previous.offsets[last_unit]
    projected = previous.projected[
        base - previous.projected_origin : upto - previous.projected_origin
    ]
    bound = previous.starts[last_unit]
    with_media = [start for start in previous.with_media if absolute <= start < bound]
    for start in with_media:  # media resolves every call: those units project afresh
        unit = bisect_left(previous.starts, start)
        end = previous.starts[unit + 1] - absolute
        fresh = _project_unit(_unit_messages(rows[start - absolute : end]), media, {})
        offset = previous.offsets[unit] - base
        projected[offset : offset + len(fresh)] = fresh
    return _project_from(
        marker,
        previous.summary,
        rows,
        bound - absolute,
        absolute,
        previous.starts[first_unit:last_unit],
        previous.offsets[first_unit:last_unit],
        projected,
        base,
        with_media,
        media,
        where,
        previous,
        checked=same,
    )


def _project_from(
    marker: SessionMessage | None,
    summary: tuple[LlmMessage, ...],
    rows: tuple[SessionMessage, ...],
    index: int,
    origin: int,
    starts: list[int],
    offsets: list[int],
    projected: list[LlmMessage],
    projected_origin: int,
    with_media: list[int],
    media: MediaStore,
    where: Positions,
    replaced: _Tail | None = None,
    *,
    checked: int = 0,
) -> tuple[LlmMessage, ...] | None:
    """Project ``rows[index:]`` (``index`` a unit's first row) after what is carried over.

    ``rows[:checked]`` are known to be in walk order; the rest are checked here.
    """
    boundary = marker.compaction.dropped_through_sequence if marker and marker.compaction else 0
    previous = rows[checked - 1].sequence_number if checked else boundary
    for row in islice(rows, checked, None):
        if row.sequence_number <= previous or row.compaction is not None:
            return None  # not in walk order: projected afresh
        previous = row.sequence_number
    while index < len(rows) and rows[index].role in ("tool", "system"):
        index += 1  # results are gathered by the assistant message that asked for them
    while index < len(rows):
        end = index + 1
        while end < len(rows) and rows[end].role in ("tool", "system"):
            end += 1
        unit = _unit_messages(rows[index:end])
        known = _UNITS.get(unit)
        if known is None:
            known = _project_unit(unit, media, {})
            if _without_media(unit):
                _UNITS.put(unit, known)
            else:
                with_media.append(origin + index)
        starts.append(origin + index)
        offsets.append(projected_origin + len(projected))
        projected.extend(known)
        index = end
    tail = _Tail(
        marker,
        summary,
        rows,
        origin,
        where,
        starts,
        offsets,
        projected,
        projected_origin,
        with_media,
    )
    _keep_tail(tail, replaced)
    return (*summary, *projected)


def _unit_messages(rows: Sequence[SessionMessage]) -> Sequence[SessionMessage]:
    """A unit's messages as :func:`project_afresh` sees them (``system`` rows left out)."""
    if all(row.role != "system" for row in rows):
        return rows
    return [row for row in rows if row.role != "system"]


def _summary(marker: SessionMessage | None, media: MediaStore) -> tuple[LlmMessage, ...]:
    """What a compaction marker stands for: its view's messages, or one summary message."""
    if marker is None or marker.compaction is None:
        return ()
    view = marker.compaction.view
    if view is not None:
        messages: list[LlmMessage] = []
        start = 0
        for shown in view:
            parts = marker.content[start : start + shown.parts]
            start += shown.parts
            content = tuple(_resolve(part, media) for part in parts)
            messages.append(LlmMessage(role=shown.role, content=content))
        return tuple(messages)
    text = plain_text(marker.content).strip()
    summary = SUMMARY_PREFIX + text if text else TRIMMED_NOTE
    return (LlmMessage(role="user", content=(TextPart(text=summary),)),)


def _find_tail(marker: SessionMessage | None, first: SessionMessage) -> tuple[_Tail | None, int]:
    with _TAILS_LOCK:
        for tail in reversed(_TAILS):
            at = tail.where.find(first, tail.rows, tail.origin)
            if at is not None and tail.marker is marker:
                return tail, at
    return None, 0


def _keep_tail(tail: _Tail, replaced: _Tail | None) -> None:
    with _TAILS_LOCK:
        if replaced is not None and replaced in _TAILS:
            _TAILS.remove(replaced)  # the history continues in this tail
        if len(tail.rows) > _MAX_TAIL_ROWS:
            return
        _TAILS.append(tail)
        total = sum(len(kept.rows) for kept in _TAILS)
        while len(_TAILS) > _MAX_TAILS or total > _MAX_TAIL_ROWS:
            total -= len(_TAILS.pop(0).rows)


def _settled(unit: Sequence[SessionMessage], live: Mapping[str, object]) -> bool:
    return not any(message.id in live for message in unit)


def _without_media(unit: Sequence[SessionMessage]) -> bool:
    # Media resolves from the media store on every call (and is large): never kept.
    return not any(
        isinstance(part, DurableMediaPart) for message in unit for part in message.content
    )


def _project_unit(
    unit: Sequence[SessionMessage],
    media: MediaStore,
    live: Mapping[str, Sequence[ContentPart]],
) -> tuple[LlmMessage, ...]:
    """A user or assistant message and the tool messages right after it, projected."""
    message = unit[0]
    parts = _parts(message, media, live)
    if message.role == "user":
        # A user row may carry tool results only by mistake; they have no call in view.
        parts = [part for part in parts if not isinstance(part, ToolResultPart)]
        return (LlmMessage(role="user", content=tuple(parts)),) if parts else ()
    calls = [part for part in parts if isinstance(part, ToolCallPart)]
    projected: list[LlmMessage] = []
    if parts:
        projected.append(LlmMessage(role="assistant", content=tuple(parts)))
    if not calls:
        return tuple(projected)  # tool messages after a message without calls answer nothing
    results: dict[str, ToolResultPart] = {}
    returned_media: list[ContentPart] = []
    for tool_message in unit[1:]:
        for part in _parts(tool_message, media, live):
            if isinstance(part, ToolResultPart):
                results.setdefault(part.tool_call_id, part)
            elif isinstance(part, MediaPart | TextPart):
                returned_media.append(part)
    answered = tuple(
        results.get(call.id)
        or ToolResultPart(tool_call_id=call.id, result=INTERRUPTED_RESULT, is_error=True)
        for call in calls
    )
    projected.append(LlmMessage(role="tool", content=(*answered, *returned_media)))
    return tuple(projected)
