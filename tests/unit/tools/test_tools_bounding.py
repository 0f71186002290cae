"""The head + marker + tail preview always fits the caps and keeps both ends verbatim."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from relavium_lsp.tools.bounding import (
    MAX_RESULT_BYTES,
    MAX_RESULT_LINES,
    exceeds_bounds,
    head_and_tail,
    sanitize_input,
)
from relavium_lsp.tools.tool_output import render_page
from tests.hypothesis_profiles import examples

MARKER = re.compile(r"\[\.\.\. [\d,]+ lines / [\d,]+ bytes omitted\..*? to read on \.\.\.\]")
lines = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=400),
    min_size=1,
    max_size=6000,
)


@settings(max_examples=examples(60), deadline=None)
@given(lines=lines, trailing_newline=st.booleans())
def test_preview_fits_and_keeps_the_ends(lines: list[str], trailing_newline: bool) -> None:
    text = "\n".join(line.replace("\n", " ") for line in lines)
    text += "\n" if trailing_newline else ""
    preview = head_and_tail(text, "art-1")
    assert len(preview.encode("utf-8")) <= MAX_RESULT_BYTES
    assert preview.count("\n") + 1 <= MAX_RESULT_LINES
    marker = list(MARKER.finditer(preview))[-1]
    head = preview[: marker.start()]
    tail = preview[marker.end() + 1 :]
    # The separator newline is only added when the head was cut mid-line.
    assert text.startswith(head) or text.startswith(head.removesuffix("\n"))
    assert text.endswith(tail)


def test_small_text_is_within_bounds() -> None:
    assert not exceeds_bounds("a\n" * 1000)
    assert exceeds_bounds("a\n" * 2000)
    assert exceeds_bounds("a" * (MAX_RESULT_BYTES + 1))


def test_sanitize_bounds_depth_items_and_lengths() -> None:
    deep: dict[str, object] = {"v": "x"}
    for _ in range(10):
        deep = {"n": deep}
    cleaned = sanitize_input(
        {"deep": deep, "items": list(range(100)), "long": "y" * 5000, "password": "hunter2"}
    )
    assert "[nested value omitted]" in repr(cleaned["deep"])
    assert len(cleaned["items"]) == 33
    assert len(cleaned["long"]) < 250
    assert cleaned["password"] == "[redacted]"


def test_page_cut_at_the_byte_cap_says_where_to_continue() -> None:
    text = ("z" * 1000 + "\n") * 200
    page = render_page(text, "art-9", offset=10, limit=2000)
    assert len(page.encode()) <= MAX_RESULT_BYTES
    assert "page cut" in page and "continue with offset" in page
