"""The diff of one proposed file change, as approvals carry it (``docs/design.md`` §6.2).

A client renders it three ways: the unified text as is (a chat card, a plain LSP client's
message), the hunks' line ranges (a diff view that highlights them), or — for a native diff
editor — the old text plus the ranged edits it receives with ``workspace/applyEdit``. The
durable ``agent:approval_requested`` event keeps only :class:`DiffStat`.
"""

from __future__ import annotations

from pydantic import Field

from relavium_lsp.contracts.base import WireModel


class DiffStat(WireModel):
    """How many lines a change adds and removes."""

    added: int = Field(ge=0)
    removed: int = Field(ge=0)


class DiffHunk(WireModel):
    """One hunk: 1-based start lines and line counts on each side (unified-diff numbers)."""

    old_start: int = Field(ge=0)
    old_lines: int = Field(ge=0)
    new_start: int = Field(ge=0)
    new_lines: int = Field(ge=0)


class FileDiff(WireModel):
    """A proposed change to one file: unified diff text plus its structure.

    ``unified`` is cut after a size limit with a ``[... diff cut: …]`` marker line
    (``truncated`` says so); ``hunks`` and ``stat`` always describe the whole change.
    ``created`` marks a file that does not exist yet.
    """

    path: str
    created: bool = False
    unified: str
    hunks: list[DiffHunk]
    stat: DiffStat
    truncated: bool = False
