r"""Exact-text replacements, minimal ranged edits and unified diffs (pure functions).

``edit_file`` applies :class:`Replacement`s to the editor's current text
(:func:`apply_replacements`); every write then reaches the editor as the few ranged edits
that turn the old text into the new one (:func:`minimal_edits`), so the cursor, marks, folds
and undo granularity of the untouched lines survive; approvals carry :func:`file_diff`.

Positions are LSP positions: 0-based lines ending at ``\r\n``, ``\r`` or ``\n`` (as the client
counts them) and characters counted in UTF-16 code units; no edit starts or ends between
the two characters of a ``\r\n``. The diff itself works on lines split at ``\n``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from relavium_lsp.contracts.diff import DiffHunk, DiffStat, FileDiff
from relavium_lsp.errors import ToolError

# Past this many differing lines (after the common head and tail are set aside) the diff
# is one block: SequenceMatcher's cost grows with the product of both sides.
MAX_MATCHED_LINES = 20_000
MAX_DIFF_CHARS = 48_000
# The diff a file tool's result shows in the transcript (``agent:tool_result``): durable and
# sent to every client, so smaller than an approval's.
TRANSCRIPT_DIFF_CHARS = 16_000
DIFF_CONTEXT_LINES = 3
_SHOWN_LINE_CHARS = 120

Opcode = tuple[str, int, int, int, int]
_LSP_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Replacement:
    """Replace ``old`` (which must occur exactly once unless ``replace_all``) with ``new``."""

    old: str
    new: str
    replace_all: bool = False


@dataclass(frozen=True)
class Position:
    """An LSP position: 0-based line, UTF-16 code units into it."""

    line: int
    character: int


@dataclass(frozen=True)
class RangedEdit:
    """Replace ``start``..``end`` of the original text with ``new_text``."""

    start: Position
    end: Position
    new_text: str


def _shown(line: str) -> str:
    line = line.rstrip("\r")
    if len(line) > _SHOWN_LINE_CHARS:
        line = line[:_SHOWN_LINE_CHARS] + "…"
    return repr(line)


def _line_numbers(text: str, needle: str, limit: int = 5) -> list[int]:
    numbers: list[int] = []
    start = text.find(needle)
    while start != -1 and len(numbers) < limit:
        numbers.append(text.count("\n", 0, start) + 1)
        start = text.find(needle, start + 1)
    return numbers


def _matching_run(file_lines: Sequence[str], at: int, old_lines: Sequence[str]) -> int:
    """How many lines of ``old`` match the file from line ``at`` (first/last may be partial)."""
    last = len(old_lines) - 1
    count = 0
    for offset, wanted in enumerate(old_lines):
        index = at + offset
        if index >= len(file_lines):
            break
        line = file_lines[index]
        if offset == 0 and last > 0:
            matched = line.endswith(wanted)
        elif offset == last and last > 0:
            matched = line.startswith(wanted)
        elif last == 0:
            matched = wanted in line
        else:
            matched = line == wanted
        if not matched:
            break
        count += 1
    return count


def describe_mismatch(text: str, old: str, label: str) -> str:
    """Why ``old`` is not in ``text``: the first line of ``old`` that differs, and where."""
    file_lines = text.split("\n")
    old_lines = old.split("\n")
    best_at, best_count = -1, 0
    for at in range(len(file_lines)):
        count = _matching_run(file_lines, at, old_lines)
        if count > best_count:
            best_at, best_count = at, count
            if count == len(old_lines) - 1:
                break
    if best_count == 0:
        first = old_lines[0] or (old_lines[1] if len(old_lines) > 1 else "")
        words = " ".join(first.split())
        near = [
            n for n, line in enumerate(file_lines, 1) if words and words in " ".join(line.split())
        ]
        hint = (
            f" (a line with the same text but different whitespace is line {near[0]})"
            if near
            else ""
        )
        return (
            f"line 1 of `old` ({_shown(old_lines[0])}) is not in {label}{hint}; "
            "read the file again and copy the text exactly"
        )
    differs = best_count  # 0-based index into old_lines of the first line that differs
    file_index = best_at + differs
    if file_index >= len(file_lines):
        where = f"{label} ends after line {len(file_lines)}"
    else:
        where = f"line {file_index + 1} of {label} is {_shown(file_lines[file_index])}"
    matched = "line 1" if differs == 1 else f"lines 1-{differs}"
    return (
        f"{matched} of `old` match {label} from line {best_at + 1}, but line "
        f"{differs + 1} of `old` ({_shown(old_lines[differs])}) differs: {where}; "
        "read the file again and copy the text exactly"
    )


def apply_replacements(text: str, replacements: Sequence[Replacement], label: str) -> str:
    """``text`` with each replacement applied in order, or :class:`ToolError` (nothing changed).

    Each ``old`` is looked up in the text as the previous replacements left it.
    """
    result = text
    total = len(replacements)
    for number, replacement in enumerate(replacements, 1):
        which = f"edit {number} of {total}: " if total > 1 else ""
        if not replacement.old:
            raise ToolError(f"{which}`old` is empty; to create a file use write_file")
        if replacement.old == replacement.new:
            raise ToolError(f"{which}`old` and `new` are the same; nothing would change")
        count = result.count(replacement.old)
        if count == 0:
            raise ToolError(
                f"{which}`old` was not found, so nothing was changed: "
                + describe_mismatch(result, replacement.old, label)
            )
        if count > 1 and not replacement.replace_all:
            lines = ", ".join(str(n) for n in _line_numbers(result, replacement.old))
            raise ToolError(
                f"{which}`old` occurs {count} times in {label} (starting on lines {lines}), so "
                "nothing was changed; include more surrounding lines to make it unique, or "
                "set replaceAll to change every occurrence"
            )
        result = result.replace(replacement.old, replacement.new)
    return result


def split_lines(text: str) -> list[str]:
    r"""``text`` as lines that keep their ``\n`` (the last one may lack it)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def line_opcodes(old_lines: Sequence[str], new_lines: Sequence[str]) -> list[Opcode]:
    """Line opcodes like :meth:`SequenceMatcher.get_opcodes`, fast for long equal ends."""
    head = 0
    limit = min(len(old_lines), len(new_lines))
    while head < limit and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while (
        tail < limit - head
        and old_lines[len(old_lines) - 1 - tail] == new_lines[len(new_lines) - 1 - tail]
    ):
        tail += 1
    old_end, new_end = len(old_lines) - tail, len(new_lines) - tail
    codes: list[Opcode] = []
    if head:
        codes.append(("equal", 0, head, 0, head))
    middle_old, middle_new = old_lines[head:old_end], new_lines[head:new_end]
    if middle_old or middle_new:
        if len(middle_old) + len(middle_new) > MAX_MATCHED_LINES:
            codes.append(("replace", head, old_end, head, new_end))
        else:
            matcher = SequenceMatcher(None, middle_old, middle_new, autojunk=False)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes():
                codes.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        codes.append(("equal", old_end, len(old_lines), new_end, len(new_lines)))
    return codes


def _trimmed(old: str, new: str) -> tuple[int, int]:
    r"""Common prefix and suffix lengths of two strings, never splitting a ``\r\n``."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    if 0 < prefix < len(old) and old[prefix - 1] == "\r" and old[prefix] == "\n":
        prefix -= 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    if suffix and len(old) - suffix > 0 and old[-suffix] == "\n" and old[-suffix - 1] == "\r":
        suffix -= 1
    return prefix, suffix


def minimal_edits(old: str, new: str) -> list[RangedEdit]:
    """The few non-overlapping ranged edits (positions in ``old``) that turn it into ``new``."""
    if old == new:
        return []
    old_lines, new_lines = split_lines(old), split_lines(new)
    line_starts = [0]
    for line in old_lines:
        line_starts.append(line_starts[-1] + len(line))
    new_starts = [0]
    for line in new_lines:
        new_starts.append(new_starts[-1] + len(line))
    # Where each LSP line of ``old`` starts: after every \r\n, \r or \n (the client's rule,
    # not ours: a lone \r is a line break to it, so counting only \n misplaced every edit
    # after one).
    text_starts = [0, *(found.end() for found in _LSP_LINE_BREAK.finditer(old))]

    def position(offset: int) -> Position:
        line = bisect.bisect_right(text_starts, offset) - 1
        return Position(line, _utf16_length(old[text_starts[line] : offset]))

    edits: list[RangedEdit] = []
    for tag, i1, i2, j1, j2 in line_opcodes(old_lines, new_lines):
        if tag == "equal":
            continue
        start, end = line_starts[i1], line_starts[i2]
        replacement = new[new_starts[j1] : new_starts[j2]]
        prefix, suffix = _trimmed(old[start:end], replacement)
        start += prefix
        end -= suffix
        replacement = replacement[prefix : len(replacement) - suffix]
        edits.append(RangedEdit(position(start), position(end), replacement))
    return edits


def _grouped(codes: list[Opcode], context: int) -> Iterator[list[Opcode]]:
    """Hunks of opcodes with ``context`` equal lines around changes (difflib's grouping)."""
    if not codes:
        return
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _diff_line(mark: str, line: str) -> str:
    if line.endswith("\n"):
        return mark + line
    return f"{mark}{line}\n\\ No newline at end of file\n"


def file_diff(
    label: str, old: str | None, new: str | None, *, max_chars: int = MAX_DIFF_CHARS
) -> FileDiff:
    """The unified diff of ``old`` → ``new`` (``None``: the file is absent on that side)."""
    old_lines = split_lines(old or "")
    new_lines = split_lines(new or "")
    header = [
        "--- /dev/null\n" if old is None else f"--- a/{label}\n",
        "+++ /dev/null\n" if new is None else f"+++ b/{label}\n",
    ]
    hunks: list[DiffHunk] = []
    body: list[str] = []
    added = removed = 0
    for group in _grouped(line_opcodes(old_lines, new_lines), DIFF_CONTEXT_LINES):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        hunk = DiffHunk(
            old_start=i1 + 1 if i2 > i1 else i1,
            old_lines=i2 - i1,
            new_start=j1 + 1 if j2 > j1 else j1,
            new_lines=j2 - j1,
        )
        hunks.append(hunk)
        body.append(
            f"@@ -{hunk.old_start},{hunk.old_lines} +{hunk.new_start},{hunk.new_lines} @@\n"
        )
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                body.extend(_diff_line(" ", line) for line in old_lines[a1:a2])
                continue
            removed += a2 - a1
            added += b2 - b1
            body.extend(_diff_line("-", line) for line in old_lines[a1:a2])
            body.extend(_diff_line("+", line) for line in new_lines[b1:b2])
    unified, truncated = _cut(header + body if body else [], max_chars)
    return FileDiff(
        path=label,
        created=old is None,
        unified=unified,
        hunks=hunks,
        stat=DiffStat(added=added, removed=removed),
        truncated=truncated,
    )


def _cut(lines: list[str], max_chars: int, *, cut_before: int = 0) -> tuple[str, bool]:
    """Join diff lines, cutting whole lines past ``max_chars`` with a marker line.

    ``cut_before``: lines an earlier cut already left out (they count in the marker).
    """
    total = 0
    for index, line in enumerate(lines):
        if total + len(line) > max_chars:
            rest = len(lines) - index + cut_before
            return "".join(lines[:index]) + f"[... diff cut: {rest:,} more lines ...]\n", True
        total += len(line)
    return "".join(lines), False


_CUT_MARKER = re.compile(r"\[\.\.\. diff cut: ([\d,]+) more lines \.\.\.\]\n")


def cut_diff(diff: FileDiff, max_chars: int) -> FileDiff:
    """``diff`` with its unified text cut after ``max_chars`` (hunks and stat stay whole)."""
    if len(diff.unified) <= max_chars:
        return diff
    lines = diff.unified.splitlines(keepends=True)
    earlier = 0
    marker = _CUT_MARKER.fullmatch(lines[-1]) if diff.truncated else None
    if marker is not None:
        earlier = int(marker.group(1).replace(",", ""))
        lines.pop()
    unified, _ = _cut(lines, max_chars, cut_before=earlier)
    return diff.model_copy(update={"unified": unified, "truncated": True})


def diff_stat_text(stat: DiffStat) -> str:
    """``+3 -1`` for a status line or an approval message."""
    return f"+{stat.added} -{stat.removed}"
