"""The records of a ``relavium-session/1.0`` JSONL transcript, one per line.

Every line is one JSON object whose ``record`` field names its kind:

- ``session-open`` (first line): ``format`` and ``session`` — the row's durable facts (id,
  agentSlug, agentSnapshot, title?, modelId?, context, source, createdAt). Volatile state is
  left out: status, totals, counters, preview, the exported path, updatedAt and deletedAt.
- ``message``: a user, assistant or system message (``interruption?`` on a crash marker);
- ``tool-call``: one tool call an assistant message made. The trailing run of ``tool_call``
  parts of an assistant message is written as ``tool-call`` lines right after its
  ``message`` line (same ``sequenceNumber``) instead of inside ``content``, so reading
  puts them back exactly;
- ``tool-result``: a ``tool`` message (its ``tool_result`` parts in ``content``);
- ``compaction``: a message carrying a compaction boundary (``compaction`` set);
- ``checkpoint``: an introspection checkpoint (not restored by an import);
- ``handoff``: a delegation to another agent's child session (not restored by an import);
- ``peer-message``: a peer message the session sent or received, with its deliveries (not
  restored by an import);
- ``rolled-back-turn``: a turn that failed or was aborted, with its messages (after the
  visible messages; not restored by an import);
- ``session-close`` (last line): ``messageCount`` and ``turnCount``; a file without it is
  truncated and is refused.

Message ids and ``sessionId`` are not written: a message is identified by its
``sequenceNumber`` within the session, and an import gives every message a new id.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import ConfigDict, Field, TypeAdapter, model_validator

from relavium_lsp.contracts.base import WireModel
from relavium_lsp.contracts.content import DurableContentPart
from relavium_lsp.contracts.peers import PeerMessage
from relavium_lsp.contracts.plan import PlanEntry
from relavium_lsp.contracts.session import (
    CompactionMarker,
    InterruptionMarker,
    MessageRole,
    SessionContext,
)
from relavium_lsp.contracts.usage import TokenUsage

JSONL_FORMAT: Final = "relavium-session/1.0"


class _Record(WireModel):
    model_config = ConfigDict(strict=True)


class SessionHeader(_Record):
    """The durable facts of the session row."""

    id: str = Field(min_length=1, max_length=64)
    agent_slug: str = Field(min_length=1, max_length=200)
    agent_snapshot: dict[str, Any]
    title: str | None = None
    model_id: str | None = None
    context: SessionContext
    source: str = Field(min_length=1, max_length=64)
    created_at: str = Field(min_length=1)


class SessionOpenRecord(_Record):
    """First line."""

    record: Literal["session-open"] = "session-open"
    format: Literal["relavium-session/1.0"] = JSONL_FORMAT
    session: SessionHeader


class _MessageFields(_Record):
    sequence_number: int = Field(ge=1)
    role: MessageRole
    content: list[DurableContentPart]
    model_id: str | None = None
    compaction: CompactionMarker | None = None
    interruption: InterruptionMarker | None = None
    timestamp: str = Field(min_length=1)
    # Attribution and billing (schema version 5, §2.5); absent on older rows.
    agent_slug: str | None = Field(default=None, max_length=200)
    token_usage: TokenUsage | None = None
    cost_microcents: int | None = Field(default=None, ge=0)


class MessageRecord(_MessageFields):
    """A user, assistant or system message without a compaction boundary."""

    record: Literal["message"] = "message"

    @model_validator(mode="after")
    def _kind(self) -> MessageRecord:
        if self.role == "tool":
            raise ValueError("a tool message is a 'tool-result' record")
        if self.compaction is not None:
            raise ValueError("a message with a compaction boundary is a 'compaction' record")
        return self


class ToolResultRecord(_MessageFields):
    """A ``tool`` message."""

    record: Literal["tool-result"] = "tool-result"
    role: Literal["tool"] = "tool"

    @model_validator(mode="after")
    def _kind(self) -> ToolResultRecord:
        if self.compaction is not None:
            raise ValueError("a message with a compaction boundary is a 'compaction' record")
        return self


class CompactionRecord(_MessageFields):
    """A message carrying a compaction boundary."""

    record: Literal["compaction"] = "compaction"
    compaction: CompactionMarker


class ToolCallRecord(_Record):
    """One trailing tool call of the assistant message with the same sequence number."""

    record: Literal["tool-call"] = "tool-call"
    sequence_number: int = Field(ge=1)
    call_id: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=200)
    args: dict[str, Any] = Field(default_factory=dict)


class RolledBackMessage(_MessageFields):
    """One message of a rolled-back turn (ids are not written, as for every message)."""


class RolledBackTurnRecord(_Record):
    """A turn that failed or was aborted: out of the transcript, kept for the record.

    Written after the visible messages, before ``session-close``; an import does not restore
    it (the new session holds the visible history) and ``messageCount`` does not count it.
    """

    record: Literal["rolled-back-turn"] = "rolled-back-turn"
    user_message_sequence: int = Field(ge=1)
    stop_reason: Literal["aborted", "error"] | None = None
    error_code: str | None = None
    messages: list[RolledBackMessage]


class HandoffJsonlRecord(_Record):
    """Control passed to another agent's child session (a delegation, §2.5).

    Written after the visible messages; an import keeps it out (the child is not imported).
    """

    record: Literal["handoff"] = "handoff"
    from_agent: str
    to_agent: str
    reason: str
    sequence_number: int = Field(ge=0)
    call_id: str | None = None
    child_session_id: str | None = None


class CheckpointJsonlRecord(_Record):
    """An introspection checkpoint (a ``session:checkpoint`` event, §2.5); not imported."""

    record: Literal["checkpoint"] = "checkpoint"
    reason: str
    through_sequence: int = Field(ge=0)
    description: str
    working_memory: str


class PeerMessageJsonlRecord(_Record):
    """A peer message (§2.5) the session sent or received, with every delivery; not imported.

    Written after the checkpoints, oldest first; ``direction`` is the exported session's side.
    """

    record: Literal["peer-message"] = "peer-message"
    direction: Literal["sent", "received"]
    message: PeerMessage


class SessionCloseRecord(_Record):
    """Last line."""

    record: Literal["session-close"] = "session-close"
    message_count: int = Field(ge=0)
    turn_count: int = Field(ge=0)
    # The agent's plan at export time (absent when it never made one).
    plan: list[PlanEntry] | None = None


MessageLikeRecord = MessageRecord | ToolResultRecord | CompactionRecord
JsonlRecord = Annotated[
    SessionOpenRecord
    | MessageRecord
    | ToolCallRecord
    | ToolResultRecord
    | CompactionRecord
    | RolledBackTurnRecord
    | HandoffJsonlRecord
    | CheckpointJsonlRecord
    | PeerMessageJsonlRecord
    | SessionCloseRecord,
    Field(discriminator="record"),
]
JSONL_RECORD_ADAPTER: TypeAdapter[JsonlRecord] = TypeAdapter(JsonlRecord)
