r"""Applying an LSP ``WorkspaceEdit`` to text the way an editor does.

Positions follow the LSP rules exactly: lines end at ``\r\n``, ``\r`` or ``\n``; a
character counts UTF-16 code units (a line holding an emoji or a CJK character is converted
before slicing) and past the end of its line means the line's end (never into its line
break); a line past the end means the end of the text. Files are read and saved as editors
do (:func:`read_editor_text`, :func:`save_editor_text`): line endings untouched, a
byte-order mark hidden from the text and kept on save. Only what the server sends is supported:
``CreateFile`` (an empty document if the file is new) and ``TextDocumentEdit`` with plain or
annotated text edits (plus the older ``changes`` map); anything else — renames, deletes,
snippets — is refused before anything is applied.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path


class UnsupportedEdit(ValueError):
    """The edit contains an operation this small editor does not perform."""


@dataclass(frozen=True)
class PlannedWrite:
    """The new full text of one file after an edit."""

    path: Path
    text: str
    created: bool


def _utf16_offset_to_index(line: str, units: int) -> int:
    """The Python index in ``line`` that sits ``units`` UTF-16 code units from its start."""
    consumed = 0
    for index, character in enumerate(line):
        if consumed >= units:
            return index
        consumed += 2 if ord(character) > 0xFFFF else 1
    return len(line)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BOM = "\ufeff"


def line_spans(text: str) -> list[tuple[int, int]]:
    """Each LSP line of ``text`` as (start, end of its content), line breaks excluded."""
    spans: list[tuple[int, int]] = []
    start = 0
    for found in _LINE_BREAK.finditer(text):
        spans.append((start, found.start()))
        start = found.end()
    spans.append((start, len(text)))
    return spans


def _offset(text: str, spans: Sequence[tuple[int, int]], position: types.Position) -> int:
    """The absolute index in ``text`` of an LSP position (clamped like editors do)."""
    if position.line >= len(spans):
        return len(text)
    start, end = spans[position.line]
    return start + _utf16_offset_to_index(text[start:end], position.character)


PlainEdit = types.TextEdit | types.AnnotatedTextEdit


def apply_text_edits(text: str, edits: Sequence[PlainEdit]) -> str:
    """``text`` with every edit applied; ranges refer to the original text, as in LSP."""
    lines = line_spans(text)
    spans = sorted(
        (
            (
                _offset(text, lines, edit.range.start),
                _offset(text, lines, edit.range.end),
                edit.new_text,
            )
            for edit in edits
        ),
        key=lambda span: (span[0], span[1]),
    )
    pieces: list[str] = []
    cursor = 0
    for start, end, new_text in spans:
        if start < cursor or end < start:
            raise UnsupportedEdit("the edit has overlapping or inverted ranges")
        pieces.extend((text[cursor:start], new_text))
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def read_editor_text(path: Path) -> str | None:
    """A file's text as an editor shows it (``None`` when there is no file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return data.decode("utf-8").removeprefix(_BOM)


def save_editor_text(path: Path, text: str) -> None:
    """Save ``text`` as an editor does: the file's byte-order mark kept, endings untouched."""
    bom = path.exists() and path.read_bytes().startswith(_BOM.encode())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(((_BOM if bom else "") + text).encode("utf-8"))


def uri_to_path(uri: str) -> Path:
    """The local file behind a ``file://`` URI (anything else is refused)."""
    path = to_fs_path(uri) if uri.startswith("file:") else None
    if path is None:
        raise UnsupportedEdit(f"only file:// documents can be edited, not {uri[:80]!r}")
    return Path(path)


def plan_workspace_edit(
    edit: types.WorkspaceEdit, current_text: Callable[[Path], str | None]
) -> list[PlannedWrite]:
    """The files an edit produces, without touching anything.

    ``current_text`` returns the editor's view of a file (its open buffer, else the disk),
    or ``None`` when the file does not exist.
    """
    planned: dict[Path, PlannedWrite] = {}

    def text_of(path: Path) -> str | None:
        if path in planned:
            return planned[path].text
        return current_text(path)

    for change in edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            path = uri_to_path(change.uri)
            if text_of(path) is None:
                planned[path] = PlannedWrite(path=path, text="", created=True)
        elif isinstance(change, types.TextDocumentEdit):
            path = uri_to_path(change.text_document.uri)
            before = text_of(path)
            if before is None:
                raise UnsupportedEdit(f"{path} does not exist and the edit does not create it")
            text_edits: list[PlainEdit] = []
            for item in change.edits:
                if not isinstance(item, types.TextEdit | types.AnnotatedTextEdit):
                    raise UnsupportedEdit("snippet edits are not supported")
                text_edits.append(item)
            created = planned[path].created if path in planned else False
            planned[path] = PlannedWrite(
                path=path, text=apply_text_edits(before, text_edits), created=created
            )
        else:
            raise UnsupportedEdit(f"{type(change).__name__} operations are not supported")
    for uri, text_edits_by_uri in (edit.changes or {}).items():
        path = uri_to_path(uri)
        before = text_of(path)
        if before is None:
            raise UnsupportedEdit(f"{path} does not exist")
        planned[path] = PlannedWrite(
            path=path, text=apply_text_edits(before, text_edits_by_uri), created=False
        )
    return list(planned.values())
