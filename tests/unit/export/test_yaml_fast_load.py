"""The libyaml reader gives ruamel's data, or steps aside (differential tests against ruamel).

``load_plain_fast`` may only answer when ruamel's round-trip reader (``load_yaml``) would
give the same plain data; for everything else it answers ``None`` and callers use ruamel.
These tests feed both readers generated exports, hand-picked YAML features and randomly
mutated documents (a fixed seed, so the run is deterministic), and require agreement.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from relavium_lsp.errors import ExportError
from relavium_lsp.export.workflow_yaml import export_workflow_yaml, parse_workflow
from relavium_lsp.export.yaml_fast_load import load_plain_fast
from relavium_lsp.export.yaml_io import dump_ruamel, load_yaml
from tests.hypothesis_profiles import examples
from tests.unit.export.long_session import long_session
from tests.unit.export.yaml_strategies import documents

GOLDEN = Path(__file__).parent / "golden"
SETTINGS = settings(
    max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck)
)


def same(left: Any, right: Any, *, ordered: bool = True) -> bool:
    """Equal data of equal types, keys in the same order if ``ordered`` (NaN equals NaN)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, float) and math.isnan(left):
        return math.isnan(right)
    if isinstance(left, dict):
        keys = list(left) == list(right) if ordered else left.keys() == right.keys()
        return keys and all(same(left[key], right[key], ordered=ordered) for key in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(
            same(one, other, ordered=ordered) for one, other in zip(left, right, strict=True)
        )
    return bool(left == right)


def reference(text: str) -> Any:
    """ruamel's reading, or ``ExportError`` (the class) when it refuses the text."""
    try:
        return load_yaml(text).data
    except ExportError:
        return ExportError


@SETTINGS
@given(documents())
def test_generated_documents_read_the_same_through_libyaml(data: dict[str, Any]) -> None:
    text = dump_ruamel(data)
    fast = load_plain_fast(text)
    if fast is not None:
        assert same(fast, reference(text))
        assert same(fast, data, ordered=False)  # the writer sorts keys


def test_exports_take_the_fast_path() -> None:
    text = export_workflow_yaml(*long_session(30))
    fast = load_plain_fast(text)
    assert fast is not None
    assert same(fast, reference(text))
    for golden in sorted(GOLDEN.glob("*.relavium.yaml")):
        golden_text = golden.read_text(encoding="utf-8")
        assert same(load_plain_fast(golden_text), reference(golden_text)), golden.name


ACCEPTED = {
    "flow": ("a: [1, 'two', {b: \"c\"}]\n", {"a": [1, "two", {"b": "c"}]}),
    "folded plain": ("a: one\n  two\n\n  three\n", {"a": "one two\nthree"}),
    "quotes": ("a: 'it''s'\nb: \"\\t\\u00e9\\x41\"\n", {"a": "it's", "b": "\téA"}),
    "typed": (
        "a: ~\nb:\nc: true\nd: FALSE\ne: -12\nf: 1.5e3\ng: .inf\nh: yes\n",
        {"a": None, "b": None, "c": True, "d": False, "e": -12, "f": 1500.0, "g": math.inf}
        | {"h": "yes"},  # YAML 1.2: a string
    ),
    "tab in literal": ("a: |\n  x\n  \ty\n", {"a": "x\n\ty\n"}),
    "comments": ("# head\na: b # tail\n", {"a": "b"}),
    "leading bom": ("\ufeffa: 1\n", {"a": 1}),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_features_inside_the_subset(name: str) -> None:
    text, expected = ACCEPTED[name]
    assert same(load_plain_fast(text), expected)
    assert same(reference(text), expected)


OUTSIDE = {
    "anchor and alias": "a: &x [1]\nb: *x\n",
    "scalar anchor": "a: &x 1\n",
    "tag": "a: !!str 1\n",
    "local tag": "a: !thing 1\n",
    "directive": "%YAML 1.1\n---\na: yes\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "duplicate key": "a: 1\na: 2\n",
    "int key": "1: one\n",
    "null key": "~: none\n",
    "complex key": "? [a]\n: b\n",
    "octal": "a: 0o17\n",
    "underscored int": "a: 1_000\n",
    "leading zero": "a: 012\n",
    "timestamp": "a: 2024-01-01\n",
    "merge key": "<<: {a: 1}\n",
    "folded block": "a: >\n  x\n  y\n",
    "tab before value": "a:\t1\n",
    "tab in plain": "a: b\tc\n",
    "tab in literal header": "a: |\t\n  x\n",
    "NEL": "a: x\x85y\n",
    "line separator": "a: x\u2028y\n",
    "inner bom": "a: x\ufeffy\n",
    "top-level list": "- a\n",
    "top-level scalar": "just text\n",
    "empty": "",
    "syntax error": "a: [1,\n",
    "bad directive": "%YAML 1.91\n---\na: 1\n",
}


@pytest.mark.parametrize("name", sorted(OUTSIDE))
def test_features_outside_the_subset_go_to_ruamel(name: str) -> None:
    assert load_plain_fast(OUTSIDE[name]) is None


MUTATION_PIECES = " \n\t:#-?'\"{}[]|>&*!%@`,.\\0123456789ax\r\x85\u2028\ufeff"


def mutated_documents(count: int) -> list[str]:
    """Documents near real exports and YAML features, with a few characters changed."""
    seeds = [path.read_text(encoding="utf-8") for path in sorted(GOLDEN.glob("*.yaml"))]
    seeds += [text for text, _ in ACCEPTED.values()] + list(OUTSIDE.values())
    rng = random.Random(20251124)
    produced = []
    for _ in range(count):
        text = rng.choice(seeds)
        if len(text) > 1200:
            start = rng.randrange(len(text) - 1200)
            text = text[start : start + 1200]
        for _ in range(rng.randint(0, 3)):
            position = rng.randrange(len(text) + 1)
            choice = rng.random()
            if choice < 0.4:
                text = text[:position] + rng.choice(MUTATION_PIECES) + text[position:]
            elif choice < 0.7:
                text = text[:position] + text[position + 1 :]
            else:
                text = text[:position] + rng.choice(MUTATION_PIECES) + text[position + 1 :]
        produced.append(text)
    return produced


def test_mutated_documents_never_disagree() -> None:
    answered = 0
    for text in mutated_documents(1500):
        fast = load_plain_fast(text)
        if fast is None:
            continue
        answered += 1
        assert same(fast, reference(text)), repr(text[:400])
    assert answered > 100  # the comparison really ran on many documents


def test_parse_workflow_reports_problems_with_lines_as_before() -> None:
    """A valid-YAML but invalid document passes libyaml, then ruamel names the line."""
    text = export_workflow_yaml(*long_session(3)).replace("id: turn-2", "id: Turn 2", 1)
    assert load_plain_fast(text) is not None
    with pytest.raises(ExportError) as caught:
        parse_workflow(text)
    assert "nodes.2.agent.id: String should match pattern" in str(caught.value)
    assert caught.value.line == text.splitlines().index("    id: Turn 2") + 1
