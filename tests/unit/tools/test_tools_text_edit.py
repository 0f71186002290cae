"""Exact replacements, minimal ranged edits and unified diffs (``tools/text_edit.py``)."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from relavium_lsp.demo.edits import apply_text_edits
from relavium_lsp.errors import ToolError
from relavium_lsp.tools.text_edit import (
    Replacement,
    apply_replacements,
    cut_diff,
    file_diff,
    minimal_edits,
)
from tests.hypothesis_profiles import examples

SOURCE = "def add(a, b):\n    return a - b\n\n\nprint(add(2, 3))\n"


def apply_minimal_edits(old: str, new: str) -> str:
    """``old`` turned into ``new`` the way a client does it: minimal_edits, applied by LSP rules."""
    edits = [
        types.TextEdit(
            range=types.Range(
                start=types.Position(line=e.start.line, character=e.start.character),
                end=types.Position(line=e.end.line, character=e.end.character),
            ),
            new_text=e.new_text,
        )
        for e in minimal_edits(old, new)
    ]
    return apply_text_edits(old, edits)


def test_several_replacements_apply_in_order() -> None:
    result = apply_replacements(
        SOURCE,
        [Replacement("a - b", "a + b"), Replacement("add(2, 3)", "add(2, 4)")],
        "app.py",
    )
    assert result == "def add(a, b):\n    return a + b\n\n\nprint(add(2, 4))\n"


def test_a_missing_old_names_the_first_line_that_differs() -> None:
    old = "def add(a, b):\n    return a * b\n"
    with pytest.raises(ToolError) as caught:
        apply_replacements(SOURCE, [Replacement("a - b", "a + b"), Replacement(old, "x")], "app.py")
    message = str(caught.value)
    assert message.startswith("edit 2 of 2: `old` was not found, so nothing was changed")
    assert "line 2 of `old` ('    return a * b') differs" in message
    assert "line 2 of app.py is '    return a + b'" in message


def test_a_first_line_not_in_the_file_says_so_and_hints_at_whitespace() -> None:
    with pytest.raises(ToolError, match=r"line 1 of `old` \('retur a - b'\) is not in app.py"):
        apply_replacements(SOURCE, [Replacement("retur a - b\nfoo", "x")], "app.py")
    with pytest.raises(ToolError, match="different whitespace is line 2"):
        apply_replacements(SOURCE, [Replacement("  return  a - b", "x")], "app.py")


def test_an_ambiguous_old_needs_replace_all() -> None:
    text = "x = 1\ny = 1\n"
    with pytest.raises(ToolError, match=r"occurs 2 times in f.py \(starting on lines 1, 2\)"):
        apply_replacements(text, [Replacement("= 1", "= 2")], "f.py")
    assert apply_replacements(text, [Replacement("= 1", "= 2", True)], "f.py") == "x = 2\ny = 2\n"


def test_minimal_edits_touch_only_the_changed_lines() -> None:
    new = SOURCE.replace("a - b", "a + b")
    (edit,) = minimal_edits(SOURCE, new)
    assert (edit.start.line, edit.start.character) == (1, 13)
    assert (edit.end.line, edit.end.character) == (1, 14)
    assert edit.new_text == "+"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("", "new file\n"),
        ("a\nb", "a\nb\nc"),
        ("a\r\nb\r\n", "a\r\nB\r\n"),
        ("emoji 😀 here\nnext", "emoji 😀 there\nnext"),
        ("one\ntwo\nthree\n", ""),
        ("no newline", "no newline\n"),
    ],
)
def test_minimal_edits_round_trip_edge_cases(old: str, new: str) -> None:
    assert apply_minimal_edits(old, new) == new


# Mixed line endings, a lone CR among them (an LSP line break too), and astral characters.
PIECES = st.sampled_from(["a\n", "b\n", "c", "\r\n", "😀", "x y\n", "\n", "\r", "d\r", "é\r\n"])


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(PIECES, max_size=14), st.lists(PIECES, max_size=14))
def test_minimal_edits_turn_old_into_new(old_parts: list[str], new_parts: list[str]) -> None:
    old, new = "".join(old_parts), "".join(new_parts)
    assert apply_minimal_edits(old, new) == new


def test_file_diff_matches_difflib_and_counts_lines() -> None:
    new = SOURCE.replace("a - b", "a + b")
    diff = file_diff("app.py", SOURCE, new)
    expected = "".join(
        difflib.unified_diff(
            SOURCE.splitlines(keepends=True),
            new.splitlines(keepends=True),
            "a/app.py",
            "b/app.py",
        )
    )
    assert diff.unified == expected
    assert (diff.stat.added, diff.stat.removed) == (1, 1)
    assert [(h.old_start, h.old_lines, h.new_start, h.new_lines) for h in diff.hunks] == [
        (1, 5, 1, 5)
    ]
    assert not diff.created and not diff.truncated


def test_a_new_file_diff_and_a_cut_diff() -> None:
    created = file_diff("n.txt", None, "a\nb")
    assert created.created and created.unified.startswith("--- /dev/null\n+++ b/n.txt\n")
    assert created.unified.endswith("+b\n\\ No newline at end of file\n")
    big = "".join(f"line {n}\n" for n in range(5000))
    cut = file_diff("big.txt", "", big, max_chars=1000)
    assert cut.truncated and len(cut.unified) < 1100
    assert cut.unified.splitlines()[-1].startswith("[... diff cut: ")
    assert cut.stat.added == 5000 and cut.hunks[0].new_lines == 5000


def test_cutting_a_diff_again_keeps_the_marker_counting_every_left_out_line() -> None:
    big = "".join(f"line {n}\n" for n in range(5000))
    whole = file_diff("big.txt", "", big, max_chars=10**9)
    assert cut_diff(whole, len(whole.unified)) is whole  # short enough: unchanged
    once = cut_diff(whole, 20_000)
    twice = cut_diff(file_diff("big.txt", "", big, max_chars=20_000), 1_000)
    for cut in (once, twice):
        assert cut.truncated and cut.stat == whole.stat and cut.hunks == whole.hunks
    shown = len(twice.unified.splitlines()) - 1  # without the marker
    total = len(whole.unified.splitlines())
    assert twice.unified.splitlines()[-1] == f"[... diff cut: {total - shown:,} more lines ...]"
    assert len(twice.unified) < 1_100 and whole.unified.startswith(twice.unified.rsplit("[", 1)[0])
