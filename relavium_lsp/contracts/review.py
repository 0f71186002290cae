"""Reviewing what a turn changed, file by file (``docs/design.md`` §6.4).

``relavium/turnChanges``, ``relavium/checkpointContent`` and ``relavium/reviewChanges``.
A turn that changed files leaves a checkpoint of each (§6.3); the review lists them with line
counts, shows each against its checkpoint, and keeps or undoes them file by file. Undo is a
rewind of those files only; the decisions are stored so every window shows them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from relavium_lsp.contracts.base import WireModel
from relavium_lsp.contracts.rewind import FileProblem, ShownPath

SessionId = str
ReviewDecision = Literal["keep", "undo"]
ReviewState = Literal["pending", "kept", "undone"]


class TurnChangesParams(WireModel):
    """``relavium/turnChanges``: the files one turn changed (default: the latest such turn)."""

    session_id: SessionId = Field(min_length=1, max_length=64)
    user_sequence: int | None = Field(default=None, ge=1)


class TurnChangedFile(WireModel):
    """One file a turn changed: line counts against the turn's checkpoint, and its review.

    ``added`` / ``removed`` compare the checkpoint with what the file holds now — or, when a
    later turn changed it again, with what it held before that turn.
    """

    path: str
    created: bool
    deleted: bool
    added: int = Field(ge=0)
    removed: int = Field(ge=0)
    review: ReviewState


class TurnChangesResult(WireModel):
    """The turn of user message ``userSequence`` and its files (none: ``files`` is empty)."""

    user_sequence: int | None = None
    files: list[TurnChangedFile]


class CheckpointContentParams(WireModel):
    """``relavium/checkpointContent``: a file as it was before a turn (for a diff view)."""

    session_id: SessionId = Field(min_length=1, max_length=64)
    user_sequence: int = Field(ge=1)
    path: ShownPath


class CheckpointContentResult(WireModel):
    """The file's text before the turn; ``existed`` false (no ``content``): the turn made it."""

    existed: bool
    content: str | None = None


class ReviewChangesParams(WireModel):
    """``relavium/reviewChanges``: keep or undo a turn's files (no ``paths``: all of them)."""

    session_id: SessionId = Field(min_length=1, max_length=64)
    user_sequence: int = Field(ge=1)
    decision: ReviewDecision
    paths: list[ShownPath] | None = Field(default=None, min_length=1, max_length=10_000)


class ReviewChangesResult(WireModel):
    """What a review did, file by file.

    ``kept``: marked kept. Undo puts files back as a rewind does: ``restored`` / ``deleted``
    (a file the turn created) / ``unchanged`` (already as before the turn); ``conflicts`` were
    changed after the agent and left alone; ``failed`` were refused by the editor. Files in
    the last two stay pending.
    """

    kept: list[str] = Field(default_factory=list)
    restored: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)
    conflicts: list[FileProblem] = Field(default_factory=list)
    failed: list[FileProblem] = Field(default_factory=list)
