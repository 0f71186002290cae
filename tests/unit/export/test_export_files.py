"""Writing exports into the workspace: never outside it, never over someone else's file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from relavium_lsp.errors import ExportError
from relavium_lsp.export.files import write_export_file


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def test_writes_under_the_exports_folder_and_reuses_identical_content(workspace: Path) -> None:
    path = write_export_file(str(workspace), "notes", ".relavium.yaml", "a: 1\n")
    assert path == workspace / ".relavium" / "exports" / "notes.relavium.yaml"
    assert path.read_text(encoding="utf-8") == "a: 1\n"
    assert write_export_file(str(workspace), "notes", ".relavium.yaml", "a: 1\n") == path
    other = write_export_file(str(workspace), "notes", ".relavium.yaml", "a: 2\n")
    assert other.name == "notes-2.relavium.yaml"
    assert path.read_text(encoding="utf-8") == "a: 1\n"
    assert other.read_text(encoding="utf-8") == "a: 2\n"


def test_a_symlinked_relavium_folder_leading_outside_is_refused(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".relavium").symlink_to(outside)
    with pytest.raises(ExportError, match="leads outside"):
        write_export_file(str(workspace), "x", ".relavium.yaml", "a: 1\n")
    assert list(outside.iterdir()) == []


def test_a_symlinked_exports_folder_leading_outside_is_refused(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".relavium").mkdir()
    (workspace / ".relavium" / "exports").symlink_to(outside)
    with pytest.raises(ExportError, match="leads outside"):
        write_export_file(str(workspace), "x", ".relavium.yaml", "a: 1\n")
    assert list(outside.iterdir()) == []


def test_a_planted_symlink_or_fifo_is_never_written_through(
    workspace: Path, tmp_path: Path
) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("precious", encoding="utf-8")
    exports = workspace / ".relavium" / "exports"
    exports.mkdir(parents=True)
    (exports / "x.relavium.yaml").symlink_to(target)
    os.mkfifo(exports / "x-2.relavium.yaml")
    path = write_export_file(str(workspace), "x", ".relavium.yaml", "a: 1\n")
    assert path.name == "x-3.relavium.yaml"
    assert target.read_text(encoding="utf-8") == "precious"


@pytest.mark.parametrize(
    ("stem", "suffix"),
    [("../escape", ".relavium.yaml"), (".hidden", ".jsonl"), ("ok", "/x.yaml"), ("a/b", ".jsonl")],
)
def test_unsafe_names_are_refused(workspace: Path, stem: str, suffix: str) -> None:
    with pytest.raises(ExportError, match="unsafe"):
        write_export_file(str(workspace), stem, suffix, "x")


def test_a_missing_workspace_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="does not exist"):
        write_export_file(str(tmp_path / "gone"), "x", ".jsonl", "x")
