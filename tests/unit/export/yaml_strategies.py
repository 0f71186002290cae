"""Hypothesis strategies for the YAML differential tests: JSON data that stresses YAML."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

# Fragments that change how a YAML emitter or reader treats a string.
TRICKY_PIECES = [
    *" \n\t:#-?'\"{}[]|>&*!%@`,.\\\r\x00\x1b\x7f\x85\xa0\u2028\u2029\ufeff\ufffe\ud7ff\ue000",
    *"0123456789abcxyzé€",
    "\U0001f600",
    "---",
    "...",
    ": ",
    " #",
    "\n\n",
    "- ",
    "? ",
    "<<",
    "=",
    "~",
    "0x1F",
    "0o17",
    "1e3",
    "1_000",
    ".inf",
    "null",
    "yes",
    "No",
    "True",
    "2024-01-01",
    "12:30",
    "{{ctx.x}}",
]
tricky_text = st.lists(st.sampled_from(TRICKY_PIECES), max_size=8).map("".join)
any_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=24)
text = st.one_of(tricky_text, any_text)
# Keys with a line break are written as ``? key`` by ruamel: the fast writer defers those.
LINE_BREAKS = "\n\x85\u2028\u2029"
simple_key = text.filter(lambda key: not any(mark in key for mark in LINE_BREAKS))
scalar = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.sampled_from([float("nan"), 1e16, 1e-7, -0.0, 100.0, 1e300])
    | text
)


def json_values(keys: st.SearchStrategy[str] = simple_key) -> st.SearchStrategy[Any]:
    """Nested JSON-shaped values (lists, string-keyed dicts, scalars)."""

    def nest(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4)

    return st.recursive(scalar, nest, max_leaves=24)


def documents(keys: st.SearchStrategy[str] = simple_key) -> st.SearchStrategy[dict[str, Any]]:
    """A document: a mapping at the top, as every export is."""
    return st.dictionaries(keys, json_values(keys), max_size=5)
