"""No secret value and no reasoning signature can reach an export."""

from __future__ import annotations

from pathlib import Path

import pytest

from relavium_lsp.contracts.content import ReasoningPart, TextPart, de_inline
from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.llm.seam import ReasoningDelta, StopChunk, TextDelta
from relavium_lsp.store.media import MediaStore
from tests.unit.export.export_support import export_untitled, open_rig

API_KEY = "sk-proj-EXPORTLEAKCANARY0123456789abcdef"
SIGNATURES = ("SIGNATURE-CANARY-streamed-9f8e7d", "SIGNATURE-CANARY-direct-1a2b3c")


async def test_exports_hold_no_signature_and_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    calls = [
        [
            ReasoningDelta(text="Consider the question.", signature=SIGNATURES[0]),
            TextDelta(text="Here is the answer."),
            StopChunk(stop_reason="stop", usage=TokenUsage(input_tokens=3, output_tokens=4)),
        ]
    ]
    rig = await open_rig(tmp_path / "home", calls)
    try:
        workspace = tmp_path / "ws"
        workspace.mkdir()
        session = await rig.engine.start(context=SessionContext(working_dir=str(workspace)))
        assert (await rig.engine.send(session.id, "Question?")).stop_reason == "stop"
        # A second message whose in-flight parts carried a signature, made durable directly.
        durable = de_inline(
            [ReasoningPart(text="More thought.", signature=SIGNATURES[1]), TextPart(text="Also.")],
            MediaStore(tmp_path / "media"),
        )
        await rig.store.run(lambda s: s.append_message(session.id, "assistant", durable))
        exports = [
            (await export_untitled(rig.engine, session.id, fmt)).content
            for fmt in ("workflow", "jsonl")
        ]
        readable = (await export_untitled(rig.engine, session.id, "markdown")).content
        raw_key = rig.key.raw.hex()
    finally:
        await rig.close()
    for text in exports:
        assert "Consider the question." in text and "More thought." in text
        for forbidden in (*SIGNATURES, '"signature"', "signature:", API_KEY, raw_key):
            assert forbidden not in text
    # The Markdown transcript shows the answers, never the reasoning, the signature or a key.
    assert "Here is the answer." in readable and "Also." in readable
    for forbidden in (*SIGNATURES, "Consider the question.", API_KEY, raw_key):
        assert forbidden not in readable
