"""An MCP tool result as our tool pipeline returns it: text for the model, media beside it.

- text blocks → the result text, in order;
- an embedded text resource → its text under a ``[resource URI]`` line;
- images, audio and embedded binary resources → :class:`MediaPart` (inline base64 here; the
  engine stores them content-addressed when it persists the tool message) plus a one-line
  note in the text, so the model knows what came back; parts over the media cap are
  replaced by a note;
- a resource link → a ``[resource link: URI]`` line (never fetched: that would be hidden
  egress);
- no content blocks but ``structuredContent`` → that value as compact JSON.

``isError`` results become failed runs (``tool_failed``) whose text the model reads.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from relavium_lsp.contracts.content import Base64Source, MediaPart
from relavium_lsp.tools.base import ToolRun

MAX_MEDIA_BYTES = 5 * 1024 * 1024
_MAX_MEDIA_PARTS = 8


def tool_run_from_result(result: Any) -> ToolRun:
    """Convert the SDK's ``CallToolResult``."""
    from mcp_types import (
        AudioContent,
        BlobResourceContents,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
    )

    texts: list[str] = []
    media: list[MediaPart] = []
    for block in result.content:
        if isinstance(block, TextContent):
            texts.append(block.text)
        elif isinstance(block, ImageContent | AudioContent):
            texts.append(_media(block.data, block.mime_type, block.type, media))
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            if isinstance(resource, BlobResourceContents):
                mime = resource.mime_type or "application/octet-stream"
                texts.append(_media(resource.blob, mime, f"resource {resource.uri}", media))
            else:
                texts.append(f"[resource {resource.uri}]\n{resource.text}")
        elif isinstance(block, ResourceLink):
            label = f" ({block.name})" if block.name and block.name != block.uri else ""
            texts.append(f"[resource link: {block.uri}{label}]")
    if not result.content and result.structured_content is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(texts) if texts else "(the tool returned no content)"
    failed = bool(result.is_error)
    return ToolRun(
        text=text,
        failed=failed,
        error_code="tool_failed" if failed else None,
        media=tuple(media),
    )


def _media(data: str, mime_type: str, kind: str, media: list[MediaPart]) -> str:
    """Keep one binary block as a media part; return the note the model reads."""
    try:
        size = len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return f"[{kind} {mime_type}: not valid base64, left out]"
    if size > MAX_MEDIA_BYTES or len(media) >= _MAX_MEDIA_PARTS:
        return f"[{kind} {mime_type}, {size:,} bytes: too large to keep, left out]"
    media.append(MediaPart(mime_type=mime_type, source=Base64Source(data=data)))
    return f"[{kind} {mime_type}, {size:,} bytes: attached]"
