"""Golden files: each scenario exports to exactly the stored bytes, every time.

Regenerate after an intended format change with ``RELAVIUM_UPDATE_GOLDEN=1`` and review
the diff like code.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from relavium_lsp.export.jsonl import export_jsonl
from relavium_lsp.export.workflow_yaml import (
    export_workflow_yaml,
    parse_workflow,
    restore_template,
    serialize_workflow,
)
from tests.unit.export.export_scenarios import SCENARIOS

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("RELAVIUM_UPDATE_GOLDEN") == "1"


def _check(path: Path, produced: str) -> None:
    if UPDATE:
        path.write_text(produced, encoding="utf-8", newline="")
    assert produced == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_workflow_export_matches_golden_twice(name: str) -> None:
    record, messages = SCENARIOS[name]()
    first = export_workflow_yaml(record, messages)
    _check(GOLDEN / f"{name}.relavium.yaml", first)
    again_record, again_messages = SCENARIOS[name]()
    assert export_workflow_yaml(again_record, again_messages) == first


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_golden_parses_and_reserializes_byte_identically(name: str) -> None:
    text = (GOLDEN / f"{name}.relavium.yaml").read_text(encoding="utf-8")
    document = parse_workflow(text)
    assert serialize_workflow(document) == text
    exported = document.metadata.relavium_export if document.metadata else None
    assert exported is not None
    assert exported.messages == SCENARIOS[name]()[1]


def test_tool_rounds_jsonl_matches_golden() -> None:
    record, messages = SCENARIOS["tool_rounds"]()
    _check(GOLDEN / "tool_rounds.jsonl", export_jsonl(record, messages))


def test_what_the_goldens_say() -> None:
    """The mapping rules, read back from the parsed goldens rather than eyeballed."""
    docs = {
        name: parse_workflow((GOLDEN / f"{name}.relavium.yaml").read_text(encoding="utf-8"))
        for name in SCENARIOS
    }
    chain = {name: [node.id for node in doc.nodes] for name, doc in docs.items()}
    assert chain["plain_turns"] == ["input", "turn-1", "turn-2", "output"]
    # Three tool calls over two rounds are still one turn; tools deduped in first-use order.
    tool_turn = docs["tool_rounds"].nodes[1]
    assert chain["tool_rounds"] == ["input", "turn-1", "turn-2", "output"]
    assert getattr(tool_turn, "tools", None) == ["read_file", "list_directory"]
    assert getattr(docs["tool_rounds"].nodes[2], "tools", "absent") is None
    # The interrupted turn has no node but all its rows are in metadata.
    assert chain["interrupted_final_turn"] == ["input", "turn-1", "output"]
    interrupted = docs["interrupted_final_turn"].metadata
    assert interrupted is not None and interrupted.relavium_export is not None
    assert len(interrupted.relavium_export.messages) == 7
    assert docs["non_ascii_title"].id == "deja-vu-fix-the-naive-parser-now"
    assert docs["non_ascii_title"].name == "Déjà vu: «Fix» the naïve parser — now!!"
    empty = docs["no_completed_turn"]
    assert chain["no_completed_turn"] == ["input", "output"]
    assert [(edge.from_, edge.to) for edge in empty.edges] == [("input", "output")]
    assert (empty.id, empty.name, empty.agents) == ("exported-session", "Exported session", None)
    braces = (GOLDEN / "template_braces.relavium.yaml").read_text(encoding="utf-8")
    templates = [getattr(node, "prompt_template", None) for node in docs["template_braces"].nodes]
    assert all("{{" not in (template or "") for template in templates)
    original = "Escape it: {{{raw}}} or { {spaced} } or a lone { brace\n{{second line}}"
    assert (
        templates[2]
        == "Escape it: { { {raw}}} or {  {spaced} } or a lone {  brace\n{ {second line}}"
    )
    assert restore_template(templates[2] or "") == original
    # The compaction boundary is not a turn; user text in metadata keeps its braces.
    assert chain["template_braces"] == ["input", "turn-1", "turn-2", "output"]
    assert "Why does {{ctx.workingDir}} render empty?" in braces


def test_a_relavium_session_1_0_export_stays_readable() -> None:
    """The release before ``1.1`` wrote this file; it imports, and exports again as ``1.1``."""
    from relavium_lsp.export.jsonl_import import import_jsonl

    old = (GOLDEN / "tool_rounds.v1_0.jsonl").read_text(encoding="utf-8")
    assert old.startswith('{"format":"relavium-session/1.0"')
    imported = import_jsonl(old)
    record, messages = SCENARIOS["tool_rounds"]()
    assert [m.content for m in imported.messages] == [m.content for m in messages]
    again = export_jsonl(imported.record.model_copy(update={"id": record.id}), imported.messages)
    assert again == (GOLDEN / "tool_rounds.jsonl").read_text(encoding="utf-8")
