"""Applying workspace edits like an editor: UTF-16 positions, create + edit, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from relavium_lsp.demo.edits import (
    UnsupportedEdit,
    apply_text_edits,
    plan_workspace_edit,
    uri_to_path,
)


def edit(start: tuple[int, int], end: tuple[int, int], text: str) -> types.TextEdit:
    return types.TextEdit(
        range=types.Range(
            start=types.Position(line=start[0], character=start[1]),
            end=types.Position(line=end[0], character=end[1]),
        ),
        new_text=text,
    )


def test_full_range_replacement_like_the_server_sends() -> None:
    before = "def greet(name):\n    return name\n"
    after = "def greet(name: str) -> str:\n    return name\n"
    assert apply_text_edits(before, [edit((0, 0), (2, 0), after)]) == after


def test_positions_count_utf16_code_units_not_characters() -> None:
    # The emoji is one Python character but two UTF-16 code units.
    text = "x = '😀' + y\n"
    replaced = apply_text_edits(text, [edit((0, 11), (0, 12), "z")])
    assert replaced == "x = '😀' + z\n"


def test_several_edits_refer_to_the_original_text() -> None:
    text = "one\ntwo\nthree\n"
    result = apply_text_edits(text, [edit((2, 0), (2, 5), "3"), edit((0, 0), (0, 3), "1")])
    assert result == "1\ntwo\n3\n"


def test_overlapping_edits_are_refused() -> None:
    with pytest.raises(UnsupportedEdit):
        apply_text_edits("abcdef", [edit((0, 0), (0, 4), "x"), edit((0, 2), (0, 5), "y")])


def test_a_position_past_the_end_is_clamped() -> None:
    assert apply_text_edits("abc", [edit((0, 1), (9, 0), "Z")]) == "aZ"


def test_create_then_fill_a_new_file(tmp_path: Path) -> None:
    target = tmp_path / "new.py"
    workspace_edit = types.WorkspaceEdit(
        document_changes=[
            types.CreateFile(uri=target.as_uri()),
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=target.as_uri(), version=None
                ),
                edits=[edit((0, 0), (0, 0), "print('hi')\n")],
            ),
        ]
    )
    planned = plan_workspace_edit(workspace_edit, lambda path: None)
    assert [(write.path, write.text, write.created) for write in planned] == [
        (target, "print('hi')\n", True)
    ]
    assert not target.exists()  # planning never touches the disk


def test_the_buffer_text_is_what_gets_edited(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("on disk\n", encoding="utf-8")
    workspace_edit = types.WorkspaceEdit(
        changes={target.as_uri(): [edit((0, 0), (0, 6), "edited")]}
    )
    planned = plan_workspace_edit(workspace_edit, lambda path: "in buffer\n")
    assert planned[0].text == "editedfer\n"


def test_renames_deletes_and_missing_files_are_refused(tmp_path: Path) -> None:
    rename = types.WorkspaceEdit(
        document_changes=[
            types.RenameFile(old_uri=(tmp_path / "a").as_uri(), new_uri=(tmp_path / "b").as_uri())
        ]
    )
    with pytest.raises(UnsupportedEdit, match="RenameFile"):
        plan_workspace_edit(rename, lambda path: "")
    missing = types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=(tmp_path / "gone.py").as_uri(), version=None
                ),
                edits=[edit((0, 0), (0, 0), "x")],
            )
        ]
    )
    with pytest.raises(UnsupportedEdit, match="does not exist"):
        plan_workspace_edit(missing, lambda path: None)


def test_only_file_uris_are_accepted() -> None:
    with pytest.raises(UnsupportedEdit):
        uri_to_path("untitled:Untitled-1")
    assert uri_to_path("file:///tmp/a%20b.py") == Path("/tmp/a b.py")
