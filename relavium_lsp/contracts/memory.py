"""Params and results of the workspace memory requests (``docs/design.md`` §2.6).

A workspace's long-term memory is one plain-text (Markdown) document per workspace root: the
agent is given it when a session starts, the user reads and edits it
(``relavium/getWorkspaceMemory`` / ``relavium/setWorkspaceMemory``), and introspection
checkpoints propose additions to it — proposals the user accepts or rejects
(``relavium/listMemoryProposals`` / ``relavium/decideMemoryProposal``; until then they are in
no prompt). Every write names the revision it was based on, so two windows editing it cannot
overwrite each other without noticing.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from relavium_lsp.contracts.base import WireModel
from relavium_lsp.contracts.diff import FileDiff

# The whole document; what reaches a prompt is bounded separately (a smaller budget).
WORKSPACE_MEMORY_MAX_CHARS = 32_000
# What the introspection pass asks for as its last message; the offline model answers it
# with a deterministic checkpoint (``llm/offline.py``), so it is shared from here.
INTROSPECTION_REQUEST = "Write the checkpoint now."

MemorySource = Literal["user", "introspection"]
ProposalStatus = Literal["pending", "accepted", "rejected"]
ProposalDecision = Literal["accept", "reject"]


class WorkspaceMemoryParams(WireModel):
    """``relavium/getWorkspaceMemory``: the memory of a workspace.

    With ``sessionId`` the session's workspace is meant; else ``workingDir``; else the
    workspace the server detects (the active file's folder root).
    """

    session_id: str | None = Field(default=None, min_length=1, max_length=64)
    working_dir: str | None = Field(default=None, min_length=1, max_length=4096)


class SetWorkspaceMemoryParams(WorkspaceMemoryParams):
    """``relavium/setWorkspaceMemory``: replace the document.

    ``baseRevision`` is the revision the new text was edited from (0 when there was none
    yet); when the stored document has moved on meanwhile the write is refused with
    ``data.code`` ``memory_conflict`` and ``data.currentRevision``. Never secrets: text that
    holds something shaped like a key or token is refused (the error names the line, never
    the value).
    """

    text: str = Field(max_length=WORKSPACE_MEMORY_MAX_CHARS)
    base_revision: int = Field(ge=0)


class WorkspaceMemoryRevision(WireModel):
    """One kept revision of the document (the newest few are kept)."""

    revision: int
    source: MemorySource
    session_id: str | None = None
    updated_at: str
    chars: int


class WorkspaceMemory(WireModel):
    """The document as it is now (revision 0: nobody wrote one yet)."""

    workspace: str
    text: str
    revision: int
    source: MemorySource | None = None
    # The session whose introspection wrote this revision (source ``introspection``).
    session_id: str | None = None
    updated_at: str | None = None
    max_chars: int = WORKSPACE_MEMORY_MAX_CHARS
    # The kept revisions, newest first (their metadata; the texts stay in the store).
    history: list[WorkspaceMemoryRevision] = Field(default_factory=list)


class MemoryProposal(WireModel):
    """Changes an introspection pass proposes to the workspace memory (§2.6, issue 35).

    Kept apart, marked with where it came from (``sessionId``, ``reason``), and given to no
    model until the user accepts it. ``text`` is the proposal's ``## Title`` sections;
    ``diff`` is what accepting it would do to the document as it is now.
    """

    id: str
    workspace: str
    session_id: str | None = None
    reason: str
    status: ProposalStatus
    created_at: str
    text: str
    diff: FileDiff | None = None


class MemoryProposals(WireModel):
    """Result of ``relavium/listMemoryProposals``: the pending ones, oldest first."""

    proposals: list[MemoryProposal] = Field(default_factory=list)


class DecideMemoryProposalParams(WireModel):
    """``relavium/decideMemoryProposal``: accept (merge into the document) or reject."""

    proposal_id: str = Field(min_length=1, max_length=64)
    decision: ProposalDecision


class DecideMemoryProposalResult(WireModel):
    """The decided proposal and, after an accept that changed it, the new document."""

    proposal: MemoryProposal
    memory: WorkspaceMemory | None = None


class WorkspaceMemoryChangedParams(WireModel):
    """``relavium/workspaceMemoryChanged`` (server → client): a workspace's memory changed.

    Sent for every new revision, whichever window (process) wrote it; a client holding an
    older revision should reload before the user saves.
    """

    workspace: str
    revision: int
    source: MemorySource
