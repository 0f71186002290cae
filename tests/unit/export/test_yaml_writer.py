"""The fast YAML writer writes ruamel's exact bytes (differential tests against ruamel).

``dump_yaml`` (what exports use) goes through :mod:`relavium_lsp.export.yaml_writer` and falls
back to ruamel (``dump_ruamel``) only for data the writer does not reproduce. These tests pin
that the fast path is byte-identical to the reference on every kind of data an export holds,
and that it is the path actually taken for them.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relavium_lsp.export.workflow_yaml import build_workflow
from relavium_lsp.export.yaml_io import dump_ruamel, dump_yaml
from relavium_lsp.export.yaml_writer import Unsupported, write_yaml
from tests.hypothesis_profiles import examples
from tests.unit.export.export_scenarios import SCENARIOS
from tests.unit.export.export_support import make_record
from tests.unit.export.long_session import long_session
from tests.unit.export.test_export_property import snapshots, transcripts
from tests.unit.export.yaml_strategies import LINE_BREAKS, documents, text

SETTINGS = settings(
    max_examples=examples(400), deadline=None, suppress_health_check=list(HealthCheck)
)

EDGE_CASES: list[dict[str, Any]] = [
    {},
    {"": 1, "'": 2, "#": 3, "n": "y", "k" * 100: "long key"},
    {"nested": [[1, [2, 3]], [], {}], "maps": {"empty": [], "also": {}}},
    {"items": ["x\ny", {"k": "l\nm", "n": [1]}, ["a\nb"]], "deep": [{"g": {"h": [{"j": 2}]}}]},
    {
        "spaces": [" lead", "trail ", " ", "x \ny", " \n x", "\nlead break", "a  b"],
        "chomping": ["x", "x\n", "x\n\n", "\n", "\n\n", "x\n\n\ny"],
        "quotes": ["it's", "it's: x", '"q"', "'", "''"],
        "indicators": ["-", "- x", "-x", "?", "? x", ":x", "x:", "a: b", "#x", "a #b", "a#b"],
        "more": ["@x", "%x", "`x", "&x", "*x", "!x", "|x", ">x", "[x]", "{x}", "x,y", ",x"],
        "documents": ["---", "--- x", "...", "...x", "x---"],
        "typed": ["yes", "No", "on", "null", "~", "1.0", "0x1F", "0o17", "1_000", "12:30"],
        "escapes": ["\x1b[0m", "tab\there", "\r\n", "\x00", "\x85", "\u2028", "\ufeff", "\xa0"],
        "unicode": ["été", "日本語", "\U0001f600", "\ud7ff", "\ue000", "\ufffd"],
    },
    {"numbers": [0, -3, 2**80, 1.5, 1e16, 1e-7, 1e300, -0.0, 100.0, float("inf"), -float("inf")]},
    {"nan": float("nan"), "bools": [True, False], "null": None},
    {"last": "ends with kept breaks\n\n"},  # the document then ends with ``...``
    {"last": ["kept\n\n"]},
    {"a": "kept\n\n", "b": "not last"},
]


@pytest.mark.parametrize("data", EDGE_CASES, ids=range(len(EDGE_CASES)))
def test_edge_cases_match_ruamel_byte_for_byte(data: dict[str, Any]) -> None:
    assert write_yaml(data) == dump_ruamel(data)


@SETTINGS
@given(documents())
def test_generated_documents_match_ruamel(data: dict[str, Any]) -> None:
    assert write_yaml(data) == dump_ruamel(data)


def has_key_with_line_break(value: Any) -> bool:
    if isinstance(value, dict):
        return any(
            any(mark in key for mark in LINE_BREAKS) or has_key_with_line_break(item)
            for key, item in value.items()
        )
    if isinstance(value, list):
        return any(map(has_key_with_line_break, value))
    return False


def assert_fast_unless_complex_keys(data: dict[str, Any]) -> None:
    """The writer matches ruamel, and defers only when a key holds a line break."""
    try:
        fast = write_yaml(data)
    except Unsupported:
        assert has_key_with_line_break(data)
    else:
        assert fast == dump_ruamel(data)
    assert dump_yaml(data) == dump_ruamel(data)


@SETTINGS
@given(st.dictionaries(text, text, min_size=1, max_size=4))
def test_keys_with_line_breaks_fall_back_to_ruamel(data: dict[str, str]) -> None:
    assert_fast_unless_complex_keys(data)


@pytest.mark.parametrize(
    "data",
    [
        {"k" * 130: 1},  # ruamel writes ``? kkk…``
        {"multi\nline": 1},
        {1: "int key"},
        {"when": __import__("datetime").date(2025, 1, 1)},
        ["not", "a", "mapping"],
    ],
    ids=["long key", "multi-line key", "int key", "date value", "top-level list"],
)
def test_what_the_writer_leaves_to_ruamel(data: Any) -> None:
    with pytest.raises(Unsupported):
        write_yaml(data)
    if isinstance(data, dict):
        assert dump_yaml(data) == dump_ruamel(data)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(messages=transcripts(), title=st.none() | text, snapshot=snapshots)
def test_generated_sessions_export_identically(
    messages: list[Any], title: str | None, snapshot: dict[str, Any]
) -> None:
    data = build_workflow(make_record(title=title, snapshot=snapshot), messages).to_document()
    assert_fast_unless_complex_keys(data)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_golden_scenarios_take_the_fast_path(name: str) -> None:
    data = build_workflow(*SCENARIOS[name]()).to_document()
    assert write_yaml(data) == dump_ruamel(data)


def test_a_long_realistic_session_exports_identically() -> None:
    data = build_workflow(*long_session(40)).to_document()
    assert write_yaml(data) == dump_ruamel(data)
