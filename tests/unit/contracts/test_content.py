import base64

import pytest
from pydantic import TypeAdapter, ValidationError

from relavium_lsp.contracts.content import (
    Base64Source,
    ContentPart,
    DurableContentPart,
    MediaPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    UrlSource,
    de_inline,
    estimate_tokens,
    plain_text,
)
from relavium_lsp.store.media import MediaStore

DURABLE = TypeAdapter(list[DurableContentPart])


def test_de_inline_drops_signature_and_stores_media(tmp_path):
    media = MediaStore(tmp_path / "media")
    png = b"\x89PNG fake bytes"
    parts = [
        ReasoningPart(text="thinking", signature="sig-secret-abc"),
        MediaPart(mime_type="image/png", source=Base64Source(data=base64.b64encode(png).decode())),
        TextPart(text="hello"),
    ]
    durable = de_inline(parts, media)
    dumped = DURABLE.dump_json(durable).decode()
    assert "sig-secret-abc" not in dumped
    assert "signature" not in dumped
    handle = durable[1].source.handle  # type: ignore[union-attr]
    assert handle.startswith("media://sha256-")
    assert media.get(handle) == png
    # the durable union itself refuses signatures and inline bytes
    with pytest.raises(ValidationError):
        DURABLE.validate_python([{"type": "reasoning", "text": "x", "signature": "s"}])
    with pytest.raises(ValidationError):
        DURABLE.validate_python(
            [{"type": "media", "mimeType": "image/png", "source": {"kind": "base64", "data": ""}}]
        )


def test_de_inline_never_fetches_urls(tmp_path):
    durable = de_inline(
        [MediaPart(mime_type="image/png", source=UrlSource(url="https://example.com/a.png"))],
        MediaStore(tmp_path),
    )
    assert isinstance(durable[0], TextPart)
    assert "https://example.com/a.png" in durable[0].text
    assert not any(tmp_path.iterdir())


def test_de_inline_rejects_bad_base64(tmp_path):
    with pytest.raises(ValueError, match="not valid base64"):
        de_inline(
            [MediaPart(mime_type="image/png", source=Base64Source(data="@@@"))],
            MediaStore(tmp_path),
        )


def test_media_store_detects_tampering(tmp_path):
    media = MediaStore(tmp_path)
    handle = media.put(b"abc")
    digest = handle.removeprefix("media://sha256-")
    (tmp_path / digest[:2] / digest).write_bytes(b"evil")
    with pytest.raises(KeyError, match="does not match"):
        media.get(handle)
    with pytest.raises(KeyError):
        media.get("media://sha256-../../etc/passwd")


def test_wire_form_is_camel_case_and_strict():
    adapter = TypeAdapter(ContentPart)
    part = adapter.validate_python({"type": "tool_result", "toolCallId": "c1", "result": "ok"})
    assert part.to_wire() == {
        "type": "tool_result",
        "toolCallId": "c1",
        "result": "ok",
        "isError": False,
    }
    with pytest.raises(ValidationError):
        adapter.validate_python({"type": "text", "text": "x", "extra": 1})


def test_plain_text_and_estimate():
    parts = [TextPart(text="a" * 40), ToolCallPart(id="c", name="read_file", args={"path": "x"})]
    assert "read_file" in plain_text(parts)
    assert estimate_tokens(parts) > estimate_tokens(parts[:1]) > 10
