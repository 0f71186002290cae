"""Message content parts: the in-flight union and the durable (persisted) union.

In flight (what providers stream and the engine holds during a turn) a part may carry a
reasoning ``signature`` and inline base64 media. The durable form — what is written to the
database, exported and shown to clients — structurally cannot: reasoning has no signature
field and media may only be a ``media://sha256-<hex>`` handle. :func:`de_inline` is the one
function that turns the first into the second.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Protocol

from pydantic import Field

from relavium_lsp.contracts.base import WireModel

MEDIA_HANDLE_PATTERN = r"^media://sha256-[0-9a-f]{64}$"


class TextPart(WireModel):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str


class ReasoningPart(WireModel):
    """Model reasoning as streamed; the signature only lives in flight."""

    type: Literal["reasoning"] = "reasoning"
    text: str
    signature: str | None = None
    redacted: bool = False


class DurableReasoningPart(WireModel):
    """Reasoning as persisted: there is no place for a signature."""

    type: Literal["reasoning"] = "reasoning"
    text: str
    redacted: bool = False


class ToolCallPart(WireModel):
    """The model asked for a tool to run."""

    type: Literal["tool_call"] = "tool_call"
    id: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=200)
    args: dict[str, Any] = Field(default_factory=dict)


class ToolResultPart(WireModel):
    """What a tool returned (already bounded for the model)."""

    type: Literal["tool_result"] = "tool_result"
    tool_call_id: str = Field(min_length=1, max_length=200)
    result: str
    is_error: bool = False


class Base64Source(WireModel):
    """Media bytes inline, base64 encoded."""

    kind: Literal["base64"] = "base64"
    data: str


class HandleSource(WireModel):
    """Media bytes kept in the content-addressed media store."""

    kind: Literal["handle"] = "handle"
    handle: str = Field(pattern=MEDIA_HANDLE_PATTERN)


class UrlSource(WireModel):
    """Media referenced by URL (never fetched implicitly)."""

    kind: Literal["url"] = "url"
    url: str = Field(max_length=4096)


MediaSource = Annotated[Base64Source | HandleSource | UrlSource, Field(discriminator="kind")]


class MediaPart(WireModel):
    """An image or other binary attachment, in flight."""

    type: Literal["media"] = "media"
    mime_type: str = Field(min_length=1, max_length=200)
    source: MediaSource
    name: str | None = None


class DurableMediaPart(WireModel):
    """Media as persisted: a handle into the media store, nothing else."""

    type: Literal["media"] = "media"
    mime_type: str = Field(min_length=1, max_length=200)
    source: HandleSource
    name: str | None = None


ContentPart = Annotated[
    TextPart | ReasoningPart | ToolCallPart | ToolResultPart | MediaPart,
    Field(discriminator="type"),
]
DurableContentPart = Annotated[
    TextPart | DurableReasoningPart | ToolCallPart | ToolResultPart | DurableMediaPart,
    Field(discriminator="type"),
]


class MediaSink(Protocol):
    """Where :func:`de_inline` puts media bytes (the store's ``MediaStore`` is one)."""

    def put(self, data: bytes) -> str:
        """Keep ``data`` and return its ``media://sha256-<hex>`` handle."""
        ...


def de_inline(parts: Sequence[ContentPart], media: MediaSink) -> list[DurableContentPart]:
    """Turn in-flight parts into their durable form.

    Reasoning loses its signature; base64 media is written to the content-addressed store and
    replaced by its handle; a URL is never fetched here (that would be hidden egress), so it
    is kept as a text reference instead.
    """
    durable: list[DurableContentPart] = []
    for part in parts:
        if isinstance(part, ReasoningPart):
            durable.append(DurableReasoningPart(text=part.text, redacted=part.redacted))
        elif isinstance(part, MediaPart):
            durable.append(_durable_media(part, media))
        else:
            durable.append(part)
    return durable


def _durable_media(part: MediaPart, media: MediaSink) -> DurableContentPart:
    source = part.source
    if isinstance(source, HandleSource):
        return DurableMediaPart(mime_type=part.mime_type, source=source, name=part.name)
    if isinstance(source, UrlSource):
        label = part.name or part.mime_type
        return TextPart(text=f"[media {label}: {source.url}]")
    try:
        data = base64.b64decode(source.data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"media part {part.name or part.mime_type!r} is not valid base64") from exc
    handle = media.put(data)
    return DurableMediaPart(
        mime_type=part.mime_type, source=HandleSource(handle=handle), name=part.name
    )


def plain_text(parts: Sequence[DurableContentPart | ContentPart]) -> str:
    """The searchable text of a message: text, reasoning, tool names and results."""
    pieces: list[str] = []
    for part in parts:
        if isinstance(part, TextPart | ReasoningPart | DurableReasoningPart):
            pieces.append(part.text)
        elif isinstance(part, ToolCallPart):
            pieces.append(part.name)
        elif isinstance(part, ToolResultPart):
            pieces.append(part.result)
    return "\n".join(piece for piece in pieces if piece)


# A deliberately simple, provider-independent estimate (≈4 characters per token plus a
# per-part overhead). The budget walk only needs to be conservative and cheap; exact counts
# come back from providers as usage and drive compaction.
_CHARS_PER_TOKEN = 4
_PART_OVERHEAD_TOKENS = 4
_MEDIA_TOKENS = 1_000


def estimate_tokens(parts: Sequence[DurableContentPart | ContentPart]) -> int:
    """Estimate how many context tokens a message's parts occupy."""
    total = 0
    for part in parts:
        total += _PART_OVERHEAD_TOKENS
        if isinstance(part, TextPart | ReasoningPart | DurableReasoningPart):
            total += len(part.text) // _CHARS_PER_TOKEN
        elif isinstance(part, ToolCallPart):
            total += (len(part.name) + len(str(part.args))) // _CHARS_PER_TOKEN
        elif isinstance(part, ToolResultPart):
            total += len(part.result) // _CHARS_PER_TOKEN
        else:
            total += _MEDIA_TOKENS
    return total
