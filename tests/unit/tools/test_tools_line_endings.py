"""Files keep their bytes (issue 35 item 3): line endings, a BOM, the final line break.

The attack that found it: ``printf 'alpha\\r\\nbeta\\r\\ngamma\\r\\n'``, then ``edit_file``
beta → BETA on the file *not* open in the editor; the server read it with newline
translation, computed positions on the LF text and the file ended ``gamma\\r\\r\\n``. Here the
real tools run through the registry against real files — on disk, and open in a buffer
whose edits arrive as LSP ranged edits applied exactly as the LSP rules say — over random
files with mixed endings.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from relavium_lsp.tools.file_text import UTF8_BOM
from relavium_lsp.tools.host import WriteOutcome
from relavium_lsp.tools.line_endings import keep_line_endings, normalize_newlines
from relavium_lsp.tools.registry import default_registry
from tests.hypothesis_profiles import examples
from tests.unit.tools.conftest import Harness, ScriptedHost
from tests.unit.tools.test_tools_text_edit import apply_minimal_edits

ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])


class RangedEditHost(ScriptedHost):
    """An editor with the file open: a write arrives as LSP ranged edits on its buffer."""

    async def write_file(self, path: Path, text: str, *, label: str) -> WriteOutcome:
        self.buffers[path] = apply_minimal_edits(self.buffers[path], text)
        return WriteOutcome(applied=True)


def run_edit(
    data: bytes, args: dict[str, Any], *, tool: str = "edit_file", open_in_editor: bool = False
) -> tuple[bool, str, bytes]:
    """Run one tool call on a file holding ``data``: (error?, result, the file's bytes after).

    With ``open_in_editor`` the file is an open buffer (the BOM hidden, as editors do) and
    the result is that buffer saved the way an editor saves it.
    """
    with tempfile.TemporaryDirectory() as root:
        harness = Harness(Path(root), default_registry())
        path = harness.workspace / "f.txt"
        path.write_bytes(data)
        if open_in_editor:
            host = RangedEditHost()
            host.buffers[path] = data.removeprefix(UTF8_BOM).decode("utf-8")
            harness.host = host
        outcome = asyncio.run(harness.call(tool, {"path": "f.txt", **args}))
        if open_in_editor:
            bom = UTF8_BOM if data.startswith(UTF8_BOM) else b""
            return outcome.is_error, outcome.result, bom + host.buffers[path].encode("utf-8")
        return outcome.is_error, outcome.result, path.read_bytes()


def test_the_reported_crlf_file_not_open_in_the_editor() -> None:
    data = b"alpha\r\nbeta\r\ngamma\r\n"
    edit = {"edits": [{"old": "beta", "new": "BETA"}]}
    for open_in_editor in (False, True):
        failed, result, after = run_edit(data, edit, open_in_editor=open_in_editor)
        assert not failed, result
        assert after == b"alpha\r\nBETA\r\ngamma\r\n"


def test_a_model_copying_crlf_lines_as_lf_still_matches_and_keeps_crlf() -> None:
    data = UTF8_BOM + b"one\r\ntwo\r\nthree"
    edit = {"edits": [{"old": "one\ntwo\n", "new": "one\nTWO\nand a new line\n"}]}
    failed, result, after = run_edit(data, edit)
    assert not failed, result
    assert after == UTF8_BOM + b"one\r\nTWO\r\nand a new line\r\nthree"


def test_write_file_over_an_existing_file_keeps_its_endings_bom_and_final_newline() -> None:
    data = UTF8_BOM + b"a\r\nb\nc\r\n"
    failed, result, after = run_edit(
        data, {"content": "a\nB\nc\nd"}, tool="write_file", open_in_editor=False
    )
    assert not failed, result
    assert after == UTF8_BOM + b"a\r\nB\nc\r\nd\r\n"


@st.composite
def mixed_files(draw: st.DrawFn) -> tuple[bytes, list[tuple[str, str]], int]:
    """A file of unique lines with random endings, a random BOM, maybe no final line break."""
    count = draw(st.integers(min_value=1, max_value=12))
    words = draw(
        st.lists(st.sampled_from(["x", "y z", "é", "😀", "", "\t"]), min_size=count, max_size=count)
    )
    lines = [(f"line {index} {word}", draw(ENDINGS)) for index, word in enumerate(words)]
    if draw(st.booleans()):
        lines[-1] = (lines[-1][0], "")
    bom = UTF8_BOM if draw(st.booleans()) else b""
    data = bom + "".join(content + ending for content, ending in lines).encode("utf-8")
    return data, lines, draw(st.integers(min_value=0, max_value=count - 1))


@settings(max_examples=examples(150), deadline=None)
@given(mixed_files(), st.lists(st.sampled_from(["NEW", "also new", ""]), max_size=3), st.booleans())
def test_edit_file_keeps_every_untouched_byte_of_a_mixed_file(
    drawn: tuple[bytes, list[tuple[str, str]], int], extra: list[str], open_in_editor: bool
) -> None:
    data, lines, index = drawn
    content, ending = lines[index]
    # The model's edit: LF only, the chosen line replaced and maybe followed by new lines.
    new = "\n".join([f"{content} CHANGED", *extra])
    failed, result, after = run_edit(
        data, {"edits": [{"old": content, "new": new}]}, open_in_editor=open_in_editor
    )
    assert not failed, result
    counts = {"\n": 0, "\r\n": 0, "\r": 0}
    for _, each in lines:
        if each:
            counts[each] += 1
    dominant = max(counts, key=lambda each: counts[each])  # ties: \n first
    # The replaced line keeps its ending; lines the edit adds after it take the dominant
    # one (and the file still ends without a line break if it did).
    # An empty line right after a lone \r must not end in \n (the two would read as one
    # \r\n break): it ends in \r too.
    pieces = [f"{content} CHANGED", *extra]
    edited, previous = "", ""
    for number, piece in enumerate(pieces):
        last = number == len(pieces) - 1
        if number == 0:
            line_break = ending if ending or last else dominant
        else:
            line_break = "" if last and not ending else dominant
        if previous == "\r" and not piece and line_break.startswith("\n"):
            line_break = "\r"
        edited += piece + line_break
        previous = line_break
    expected_lines = [
        *(c + e for c, e in lines[:index]),
        edited,
        *(c + e for c, e in lines[index + 1 :]),
    ]
    bom = UTF8_BOM if data.startswith(UTF8_BOM) else b""
    assert after == bom + "".join(expected_lines).encode("utf-8")


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["a", "b", "", "c d"]), ENDINGS), max_size=10),
    st.lists(st.sampled_from(["a", "b", "", "c d", "e"]), max_size=10),
    st.booleans(),
)
def test_keep_line_endings_only_moves_line_breaks(
    original_lines: list[tuple[str, str]], changed_lines: list[str], final_break: bool
) -> None:
    original = "".join(content + ending for content, ending in original_lines)
    changed = "\n".join(changed_lines) + ("\n" if final_break and changed_lines else "")
    kept = keep_line_endings(original, changed)
    assert normalize_newlines(kept) == changed
    if normalize_newlines(original) == changed:
        assert kept == original  # nothing changed: every byte is the original's
