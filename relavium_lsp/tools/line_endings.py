r"""The line endings a file tool's change keeps (issue 35).

A model reads ``\r\n`` files and writes ``\n`` text. ``edit_file`` therefore matches and
replaces on text whose line breaks are all ``\n`` (:func:`normalize_newlines`), and both
``edit_file`` and ``write_file`` hand the result to :func:`keep_line_endings`, which puts the
file's own endings back: every line keeps the ending it had (mixed files stay mixed), a new
line takes the file's most common ending, and whether the text ends with a line break
follows the change. ``write_file`` over an existing file also keeps its final line break
(:func:`keep_final_newline`). Line breaks are counted as LSP counts them: ``\r\n``, ``\r``
and ``\n``.
"""

from __future__ import annotations

import re
from collections import Counter

from relavium_lsp.tools.text_edit import line_opcodes

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_NOT_LF = re.compile(r"\r\n?")


def normalize_newlines(text: str) -> str:
    r"""``text`` with every ``\r\n`` and lone ``\r`` made ``\n``."""
    return _NOT_LF.sub("\n", text) if "\r" in text else text


def _split(text: str) -> tuple[list[str], list[str]]:
    """Line contents and their endings; the last line's ending is always ``""``."""
    contents: list[str] = []
    endings: list[str] = []
    start = 0
    for found in _LINE_BREAK.finditer(text):
        contents.append(text[start : found.start()])
        endings.append(found.group())
        start = found.end()
    contents.append(text[start:])
    endings.append("")
    return contents, endings


def dominant_ending(text: str) -> str:
    r"""The file's most common line ending (``\n`` for a file with none; ties go to ``\n``)."""
    counts = Counter(found.group() for found in _LINE_BREAK.finditer(text))
    if not counts:
        return "\n"
    return max(("\n", "\r\n", "\r"), key=lambda ending: counts[ending])


def keep_line_endings(original: str, changed: str) -> str:
    """``changed`` with ``original``'s line endings wherever its lines are kept (module doc).

    Lines are aligned by content (a line diff, endings ignored); a line of ``changed`` that
    stands for a line of ``original`` — kept, or replaced in place — takes that line's ending,
    any other takes :func:`dominant_ending`.
    """
    if "\r" not in original and "\r" not in changed:
        return changed  # the common case: nothing to put back
    old_lines, old_endings = _split(original)
    new_lines, _ = _split(changed)
    fallback = dominant_ending(original)
    last = len(new_lines) - 1
    pieces: list[str] = []
    previous = ""
    for tag, i1, i2, j1, j2 in line_opcodes(old_lines, new_lines):
        for offset, index in enumerate(range(j1, j2)):
            pieces.append(new_lines[index])
            if index == last:
                continue
            aligned = i1 + offset if tag in ("equal", "replace") and offset < i2 - i1 else None
            ending = (old_endings[aligned] if aligned is not None else "") or fallback
            if previous == "\r" and not new_lines[index] and ending.startswith("\n"):
                ending = "\r"  # after a lone \r, a \n would join it into one \r\n break
            pieces.append(ending)
            previous = ending
    return "".join(pieces)


def keep_final_newline(original: str | None, changed: str) -> str:
    """``changed``, ending with a line break when ``original`` (an existing file) did."""
    if not original or not changed or _LINE_BREAK.match(changed[-1]):
        return changed
    if not _LINE_BREAK.match(original[-1]):
        return changed
    return changed + dominant_ending(original)
