"""The strict workflow parser: what it accepts, and where it says a document is wrong."""

from __future__ import annotations

import pytest

from relavium_lsp.errors import ExportError
from relavium_lsp.export.workflow_yaml import (
    export_workflow_yaml,
    parse_workflow,
    serialize_workflow,
    slugify,
)
from relavium_lsp.export.yaml_io import dump_yaml
from tests.unit.export.export_scenarios import plain_turns

MINIMAL = """\
edges:
  - from: input
    to: output
id: minimal
name: Minimal
nodes:
  - id: input
    type: input
  - id: output
    type: output
version: 1
"""


def test_a_minimal_document_round_trips() -> None:
    document = parse_workflow(MINIMAL)
    assert [node.id for node in document.nodes] == ["input", "output"]
    assert serialize_workflow(document) == MINIMAL


def test_authoring_fields_and_extra_metadata_survive() -> None:
    text = (
        MINIMAL.replace(
            "  - id: output\n",
            "  - agent_ref: helper\n    id: review\n    max_tokens: 200\n    model: gpt-4o\n"
            "    temperature: 0.2\n    type: agent\n  - id: output\n",
        )
        + "metadata:\n  owner: team-a\n  reviewed: false\n"
    )
    document = parse_workflow(text)
    assert document.metadata is not None and document.metadata.relavium_export is None
    assert parse_workflow(serialize_workflow(document)) == document
    assert "owner: team-a" in serialize_workflow(document)


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


# An export with one timestamp left unquoted: YAML reads it as a datetime, not text.
_UNQUOTED_TIMESTAMP = export_workflow_yaml(*plain_turns()).replace(
    "createdAt: '2025-03-01T09:00:00.000Z'", "createdAt: 2025-03-01T09:00:00Z"
)

ERRORS = {
    "unknown top-level key": (MINIMAL + "colour: blue\n", 12, "colour"),
    "unknown node key": (
        MINIMAL.replace("    type: output\n", "    type: output\n    x: 1\n"),
        11,
        "x",
    ),
    "python name instead of the key": (
        MINIMAL.replace("  - from: input", "  - from_: input"),
        2,
        "from",
    ),
    "version as a string": (MINIMAL.replace("version: 1", "version: '1'"), 11, "version"),
    "unknown node type": (MINIMAL.replace("type: output", "type: loop"), 10, "type"),
    "edge to nowhere": (MINIMAL.replace("to: output", "to: elsewhere"), 1, "unknown node"),
    "duplicate node id": (MINIMAL.replace("id: output", "id: input"), 1, "used twice"),
    "bad node id": (
        MINIMAL.replace("id: output\n", "id: Not Kebab\n").replace("to: output", "to: Not Kebab"),
        9,
        "nodes.1",
    ),
    "agent without agent_ref": (MINIMAL.replace("type: output", "type: agent"), 9, "agent_ref"),
    "timestamp where text belongs": (
        _UNQUOTED_TIMESTAMP,
        _line_of(_UNQUOTED_TIMESTAMP, "createdAt: 2025"),
        "createdAt",
    ),
    "not a mapping": ("- a\n- b\n", 1, "mapping"),
    "broken YAML": ("id: [unclosed\n", 2, "not valid YAML"),
    "duplicate key": (MINIMAL + "id: again\n", 12, "duplicate"),
    "alias": (MINIMAL.replace("edges:\n", "edges: &e\n") + "metadata:\n  copy: *e\n", 1, "aliases"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_name_the_line(case: str) -> None:
    text, line, fragment = ERRORS[case]
    with pytest.raises(ExportError) as raised:
        parse_workflow(text)
    assert fragment in raised.value.message
    assert raised.value.line == line, raised.value.message


def test_exponential_aliases_are_refused_quickly() -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 30)]
    with pytest.raises(ExportError, match="aliases"):
        parse_workflow("\n".join(lines) + "\n")


def test_an_unknown_yaml_version_is_an_export_error() -> None:
    with pytest.raises(ExportError, match="unsupported %YAML directive"):
        parse_workflow("%YAML 1.91\n---\nversion: 1\n")


def test_strings_that_look_like_other_types_stay_strings() -> None:
    tricky = ["yes", "No", "on", "~", "null", "1.0", "0x1f", "1e3", "1:20", "2024-01-01", "<<", "="]
    text = dump_yaml({"values": tricky, "keys": {value: value for value in tricky}})
    for value in ("yes", "on", "1:20", "<<"):
        assert f"'{value}'" in text
    from relavium_lsp.export.yaml_io import load_yaml

    assert load_yaml(text).data == {"values": tricky, "keys": {v: v for v in tricky}}


def test_long_lines_are_never_folded() -> None:
    long_text = "word " * 400
    text = dump_yaml({"a": long_text.strip(), "b": "x\n" + long_text})
    assert len(text.splitlines()) == 4


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Fix the login bug", "fix-the-login-bug"),
        ("  --Hello,   World!!  ", "hello-world"),
        ("Déjà vu: «Fix» the naïve parser — now!!", "deja-vu-fix-the-naive-parser-now"),
        # Transliterated by a slug library, not stripped: no letters or whole titles lost.
        ("Straße für Ärger", "strasse-fur-arger"),
        ("Привет мир", "privet-mir"),
        ("Æsir & Œuvre", "aesir-oeuvre"),
        ("日本語", "ri-ben-yu"),
        ("🙂 ✨", "exported-session"),
        ("", "exported-session"),
        (None, "exported-session"),
        ("a" * 80, "a" * 64),
        ("x" * 63 + " tail", "x" * 63),
    ],
)
def test_slugify(title: str | None, slug: str) -> None:
    assert slugify(title) == slug
