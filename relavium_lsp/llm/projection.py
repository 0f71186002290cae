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
from collections.abc import Mapping, Sequence

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
    plain_text,
)
from relavium_lsp.contracts.session import SessionMessage
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


def project_messages(
    messages: Sequence[SessionMessage],
    media: MediaStore,
    *,
    in_flight: Mapping[str, Sequence[ContentPart]] | None = None,
) -> tuple[LlmMessage, ...]:
    """Project stored messages (any order, any window of history) for a model call.

    The history is cut into units — a user or assistant message with the tool messages right
    after it — and each unit projects on its own.
    """
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
        projected.extend(_project_unit(unit, media, live))
    return tuple(projected)


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
