"""The VS Code chat benchmark's fixture and rows (no browser here: no timing in tests).

The long chat it opens is a real ``relavium-session/1.0`` transcript the importer accepts,
with a tool card in every turn and the marker the browser waits for in its last message;
the token row's goal looks only at patches that carried tokens, not at a turn's start.
"""

from __future__ import annotations

from pathlib import Path

from bench.vscode_chat import LAST_MARKER, _stream_rows, long_chat
from relavium_lsp.contracts.content import TextPart, ToolCallPart
from relavium_lsp.export.jsonl_import import import_jsonl


def test_the_long_chat_imports_with_a_tool_card_per_turn(tmp_path: Path) -> None:
    read = import_jsonl(long_chat(tmp_path, turns=3))
    record, messages = read.record, read.messages
    assert len(messages) == 12
    assert record.context.working_dir == str(tmp_path)
    assert record.agent_slug == "streamer" and record.turn_count == 3
    calls = [p for m in messages for p in m.content if isinstance(p, ToolCallPart)]
    assert [call.name for call in calls] == ["read_file"] * 3
    last = messages[-1].content[0]
    assert isinstance(last, TextPart) and LAST_MARKER in last.text
    assert (
        sum(LAST_MARKER in p.text for m in messages for p in m.content if isinstance(p, TextPart))
        == 1
    )


def test_the_token_row_judges_token_patches_only() -> None:
    patches = [{"ms": 30.0, "reordered": True}] + [{"ms": 1.0, "reordered": False}] * 19
    result = {"emptyPatches": patches, "longPatches": patches, "tokens": 40, "messagesInView": 2000}
    token_row, per_token = _stream_rows(result)
    assert token_row.value == 1.0 and token_row.verdict == "pass"
    assert per_token.value == (30.0 + 19.0) / 40
    assert per_token.goal is None
