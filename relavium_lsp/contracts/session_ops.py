"""Params and results of the session-model requests (``docs/design.md`` §2.5).

Kept apart from ``wire`` so the session model's additions (details, notes, the deleted list,
purge, artifacts) read as one group.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from relavium_lsp.contracts.base import WireModel
from relavium_lsp.contracts.events import CheckpointReason, SessionCheckpoint
from relavium_lsp.contracts.peers import HandoffAuditRecord
from relavium_lsp.contracts.session import (
    DESCRIPTION_MAX_CHARS,
    AgentSessionRecord,
    HandoffRecord,
    SessionMessage,
    check_metadata,
)

_SESSION_ID = Field(min_length=1, max_length=64)


class UpdateSessionParams(WireModel):
    """``relavium/updateSession``: set what is given; ``null`` clears it, absent keeps it.

    ``metadata`` replaces the whole object (at most 16 KiB of JSON): runtime hints and UI
    state, never secrets (it is stored and exported like the transcript).
    """

    session_id: str = _SESSION_ID
    description: str | None = Field(default=None, max_length=DESCRIPTION_MAX_CHARS)
    metadata: dict[str, Any] | None = None

    _metadata_size = field_validator("metadata")(check_metadata)


class UpdateSessionResult(WireModel):
    """Result of ``relavium/updateSession``: the row as it is now."""

    session: AgentSessionRecord


class AppendMessageParams(WireModel):
    """``relavium/appendMessage``: add a note to the transcript without calling the model.

    A ``user`` note is context the agent sees on its next turn (it does not count as a turn);
    a ``system`` note is shown to the agent as a system note in history.
    """

    session_id: str = _SESSION_ID
    role: Literal["user", "system"] = "user"
    text: str = Field(min_length=1, max_length=200_000)


class AppendMessageResult(WireModel):
    """Result of ``relavium/appendMessage``: the stored message."""

    message: SessionMessage


class ListArtifactsParams(WireModel):
    """``relavium/listArtifacts``."""

    session_id: str = _SESSION_ID


class ArtifactInfo(WireModel):
    """One stored full tool output (``read_tool_output`` pages through it by ``id``)."""

    id: str
    call_id: str
    tool_name: str | None = None
    created_at: str
    chars: int
    lines: int


class ListArtifactsResult(WireModel):
    """Result of ``relavium/listArtifacts``: oldest first."""

    artifacts: list[ArtifactInfo]


class PurgeSessionResult(WireModel):
    """Result of ``relavium/purgeSession``: what was erased for good."""

    sessions: int
    messages: int
    media_files: int


HandoffDirection = Literal["incoming", "outgoing", "both"]


class ListHandoffsParams(WireModel):
    """``relavium/listHandoffs``: the handoffs a session made, or one agent's among them.

    With ``agent``: those handing control to it (``incoming``), from it (``outgoing``) or
    either (``both``, the default) — seed 004's ``handoffsByAgent``.
    """

    session_id: str = _SESSION_ID
    agent: str | None = Field(default=None, min_length=1, max_length=200)
    direction: HandoffDirection = "both"


class ListHandoffsResult(WireModel):
    """Result of ``relavium/listHandoffs``: the delegations a session made, oldest first.

    ``audit`` lists the later uses of those handoffs and of the one that started this session
    (a child resumed in a new process, a replay), oldest first.
    """

    handoffs: list[HandoffRecord]
    audit: list[HandoffAuditRecord] = Field(default_factory=list)


class CheckpointSessionParams(WireModel):
    """``relavium/checkpointSession``: run an introspection pass now (§2.5)."""

    session_id: str = _SESSION_ID
    reason: CheckpointReason = "manual"


class ListIntrospectionsResult(WireModel):
    """Result of ``relavium/listIntrospections``: the session's checkpoints, oldest first."""

    checkpoints: list[SessionCheckpoint]
