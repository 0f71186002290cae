"""A ``session/prompt``'s content blocks → the text and attachments of one user message.

- text blocks are the message text (joined by blank lines, in order);
- an embedded text resource (the editor's selection, an open file — possibly unsaved) is
  an attachment: its URI and its text in a fence longer than any backtick run inside it;
- an image (inline base64, or an embedded image blob) is a media attachment;
- a resource *link* is only named: it is never fetched here (that would be egress, or a
  read around the scope jail) — the model can read a file in scope with its tools;
- audio is refused: no configured model can take it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath
from urllib.parse import urlparse

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from relavium_lsp.contracts.content import Base64Source, ContentPart, MediaPart, TextPart
from relavium_lsp.contracts.wire import MAX_MESSAGE_CHARS
from relavium_lsp.errors import InvalidInput

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
MAX_ATTACHMENTS = 20
MAX_RESOURCE_CHARS = 1_000_000
_BACKTICK_RUN = re.compile(r"`+")


def fence_for(text: str) -> str:
    """A Markdown code fence longer than any run of backticks in ``text``."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def _resource_name(uri: str) -> str:
    path = urlparse(uri).path
    return PurePosixPath(path).name or uri


def _text_resource(resource: TextResourceContents) -> TextPart:
    if len(resource.text) > MAX_RESOURCE_CHARS:
        raise InvalidInput(
            f"the embedded resource {resource.uri!r} is longer than "
            f"{MAX_RESOURCE_CHARS:,} characters"
        )
    fence = fence_for(resource.text)
    body = resource.text if resource.text.endswith("\n") else resource.text + "\n"
    return TextPart(text=f"Context from {resource.uri}:\n{fence}\n{body}{fence}")


def _blob_resource(resource: BlobResourceContents) -> ContentPart:
    mime_type = resource.mime_type or "application/octet-stream"
    if mime_type.startswith("image/"):
        return MediaPart(
            mime_type=mime_type,
            source=Base64Source(data=resource.blob),
            name=_resource_name(resource.uri),
        )
    return TextPart(text=f"[Binary resource {resource.uri} ({mime_type}) was not included]")


def _image(block: ImageContentBlock) -> ContentPart:
    if block.data:
        return MediaPart(
            mime_type=block.mime_type,
            source=Base64Source(data=block.data),
            name=_resource_name(block.uri) if block.uri else None,
        )
    return TextPart(text=f"[Image {block.uri or '(no data)'} was not included]")


def _link(block: ResourceContentBlock) -> TextPart:
    title = block.title or block.name
    return TextPart(text=f"[Referenced resource: {title} <{block.uri}>]")


def prompt_to_message(blocks: Sequence[PromptBlock]) -> tuple[str, list[ContentPart]]:
    """The user message for a prompt: ``(text, attachments)``; raises :class:`InvalidInput`."""
    texts: list[str] = []
    attachments: list[ContentPart] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            texts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                attachments.append(_text_resource(resource))
            else:
                attachments.append(_blob_resource(resource))
        elif isinstance(block, ImageContentBlock):
            attachments.append(_image(block))
        elif isinstance(block, ResourceContentBlock):
            attachments.append(_link(block))
        else:
            raise InvalidInput("audio prompts are not supported")
    if len(attachments) > MAX_ATTACHMENTS:
        raise InvalidInput(f"a prompt may carry at most {MAX_ATTACHMENTS} resources")
    text = "\n\n".join(texts)
    if len(text) > MAX_MESSAGE_CHARS:
        raise InvalidInput(f"the prompt text is longer than {MAX_MESSAGE_CHARS:,} characters")
    if not text.strip() and not attachments:
        raise InvalidInput("the prompt is empty")
    return text, attachments
