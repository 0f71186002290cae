"""Prompt content blocks → the user message."""

from __future__ import annotations

import pytest
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from relavium_lsp.acp.prompt_content import MAX_RESOURCE_CHARS, fence_for, prompt_to_message
from relavium_lsp.contracts.content import Base64Source, MediaPart, TextPart
from relavium_lsp.errors import InvalidInput


def text(value: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=value)


def embedded(resource: TextResourceContents | BlobResourceContents) -> EmbeddedResourceContentBlock:
    return EmbeddedResourceContentBlock(type="resource", resource=resource)


def test_text_blocks_join_and_resources_become_attachments() -> None:
    message, attachments = prompt_to_message(
        [
            text("first"),
            embedded(TextResourceContents(uri="file:///w/a.py", text="print(1)")),
            text("second"),
            ResourceContentBlock(type="resource_link", uri="https://x.test/doc", name="doc"),
        ]
    )
    assert message == "first\n\nsecond"
    context, link = attachments
    assert isinstance(context, TextPart)
    assert context.text == "Context from file:///w/a.py:\n```\nprint(1)\n```"
    assert isinstance(link, TextPart) and "https://x.test/doc" in link.text


def test_the_fence_outgrows_backticks_in_the_resource() -> None:
    assert fence_for("no ticks") == "```"
    assert fence_for("a ```` b") == "`````"
    _, (part,) = prompt_to_message(
        [embedded(TextResourceContents(uri="file:///x.md", text="```\nbreak out\n```\n"))]
    )
    assert isinstance(part, TextPart) and part.text.splitlines()[1] == "````"


def test_images_become_media_and_other_blobs_are_named_only() -> None:
    _, attachments = prompt_to_message(
        [
            ImageContentBlock(type="image", data="aGVsbG8=", mime_type="image/png"),
            embedded(
                BlobResourceContents(uri="file:///w/p.png", blob="aGk=", mime_type="image/png")
            ),
            embedded(BlobResourceContents(uri="file:///w/x.bin", blob="aGk=")),
        ]
    )
    image, blob_image, binary = attachments
    assert isinstance(image, MediaPart) and image.source == Base64Source(data="aGVsbG8=")
    assert isinstance(blob_image, MediaPart) and blob_image.name == "p.png"
    assert isinstance(binary, TextPart) and "was not included" in binary.text


@pytest.mark.parametrize(
    "blocks",
    [
        [],
        [text("   ")],
        [AudioContentBlock(type="audio", data="AAAA", mime_type="audio/wav")],
        [embedded(TextResourceContents(uri="file:///big", text="x" * (MAX_RESOURCE_CHARS + 1)))],
        [
            ResourceContentBlock(type="resource_link", uri=f"file:///{i}", name="n")
            for i in range(21)
        ],
        [text("x" * 200_001)],
    ],
)
def test_unusable_prompts_are_refused(blocks: list[object]) -> None:
    with pytest.raises(InvalidInput):
        prompt_to_message(blocks)  # type: ignore[arg-type]
