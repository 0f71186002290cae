"""``relavium/listCheckpoints``, ``relavium/rewind`` and ``relavium/undoRewind`` (§6.3)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from relavium_lsp.contracts.base import WireModel

SessionId = str
# A file as the answers name it: relative to the workspace folder (absolute outside it).
ShownPath = Annotated[str, Field(min_length=1, max_length=4096)]


class ListCheckpointsParams(WireModel):
    """``relavium/listCheckpoints``."""

    session_id: SessionId = Field(min_length=1, max_length=64)


class CheckpointFile(WireModel):
    """A file a turn changed: ``created`` when it did not exist before the turn."""

    path: str
    created: bool
    size: int | None = None


class TurnCheckpoint(WireModel):
    """What a rewind to ``userSequence`` (the turn's user message) would restore."""

    user_sequence: int
    timestamp: str
    files: list[CheckpointFile]


class ListCheckpointsResult(WireModel):
    """The session's checkpoints, oldest turn first."""

    checkpoints: list[TurnCheckpoint]


class RewindParams(WireModel):
    """``relavium/rewind``: back to before the turn of user message ``toSequence``.

    ``files``: restore every file the agent changed since then; ``conversation``: continue in
    a fork of the session that ends before that message (the original is kept).
    """

    session_id: SessionId = Field(min_length=1, max_length=64)
    to_sequence: int = Field(ge=1)
    files: bool = True
    conversation: bool = True
    # Only these files (as ``relavium/listCheckpoints`` names them); absent: every file.
    paths: list[ShownPath] | None = Field(default=None, min_length=1, max_length=10_000)


class UndoRewindParams(WireModel):
    """``relavium/undoRewind``: put back what a rewind replaced."""

    session_id: SessionId = Field(min_length=1, max_length=64)
    rewind_id: str = Field(min_length=1, max_length=64)


class FileProblem(WireModel):
    """A file a rewind left alone, and why (a conflict: the user changed it after the agent)."""

    path: str
    reason: str


class RewindResult(WireModel):
    """What a rewind (or its undo) did, file by file.

    ``sessionId`` is where the conversation continues: the fork when the conversation was
    rewound, else the session itself. ``conflicts`` were never overwritten; ``failed`` were
    refused by the editor (or could not be deleted).
    """

    rewind_id: str
    session_id: SessionId
    restored: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)
    conflicts: list[FileProblem] = Field(default_factory=list)
    failed: list[FileProblem] = Field(default_factory=list)
