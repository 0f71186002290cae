"""The records of a ``relavium-session/1.1`` JSONL transcript, one per line.

Every line is one JSON object whose ``record`` field names its kind. The records follow the
session's time: ``session-open`` first, ``session-close`` last, and in between the messages in
sequence order with everything else placed at the moment it happened (see
:func:`relavium_lsp.export.jsonl.export_jsonl` for the rule).

- ``session-open``: ``format`` and ``session`` — the row's durable facts (id, agentSlug,
  agentSnapshot, title?, modelId?, context, source, createdAt, description?,
  descriptionSource?, metadata?). Volatile state is left out: status, totals, counters,
  preview, the exported path, updatedAt and deletedAt.
- ``agent-registered``: an agent that takes part — the session's own (with its name,
  description, model and provider) at the start, and every other agent when it first appears
  (a delegate, the author of a delegated task or a peer message);
- ``message``: a user, assistant or system message (``interruption?`` on a crash marker);
- ``tool-call``: one tool call an assistant message made. The trailing run of ``tool_call``
  parts of an assistant message is written as ``tool-call`` lines right after its
  ``message`` line (same ``sequenceNumber``) instead of inside ``content``, so reading
  puts them back exactly;
- ``tool-result``: a ``tool`` message (its ``tool_result`` parts in ``content``);
- ``compaction``: a message carrying a compaction boundary (``compaction`` set);
- ``handoff``: a delegation to another agent's child session, with when, its input filter
  and how many messages of context the child got;
- ``checkpoint``: an introspection checkpoint;
- ``progress-write``: the agent wrote its plan (``update_plan``);
- ``peer-message``: a peer message the session sent or received, with its deliveries;
- ``rolled-back-turn``: a turn that failed or was aborted, with its messages;
- ``session-close`` (last line): ``messageCount`` (visible messages) and ``turnCount``; a file
  without it is truncated and is refused.

An import restores every record but ``peer-message`` (deliveries between live sessions: the
imported copy took no part in them, and a received one is in its transcript already).
Message ids and ``sessionId`` are not written: a message is identified by its
``sequenceNumber`` within the session, and an import gives every message a new id.

``relavium-session/1.0`` files (written before: no agent, progress or timing records, handoffs
and checkpoints without a time, the rest grouped by kind after the messages, ``source`` a
plain string) are still read.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import ConfigDict, Field, TypeAdapter, field_validator, model_validator

from relavium_lsp.contracts.base import WireModel
from relavium_lsp.contracts.content import DurableContentPart
from relavium_lsp.contracts.delegation import HandoffInputFilter
from relavium_lsp.contracts.events import CheckpointReason
from relavium_lsp.contracts.peers import PeerMessage
from relavium_lsp.contracts.plan import MAX_ENTRY_CHARS, MAX_PLAN_ENTRIES, PlanEntry
from relavium_lsp.contracts.session import (
    DESCRIPTION_MAX_CHARS,
    CompactionMarker,
    DescriptionSource,
    InterruptionMarker,
    MessageRole,
    SessionContext,
    SessionSource,
    check_metadata,
    coerce_source,
)
from relavium_lsp.contracts.usage import TokenUsage

JSONL_FORMAT: Final = "relavium-session/1.1"
# Files of the first version are still read (see the module docstring).
JSONL_FORMATS: Final = ("relavium-session/1.0", JSONL_FORMAT)


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
    source: SessionSource
    created_at: str = Field(min_length=1)
    description: str | None = Field(default=None, max_length=DESCRIPTION_MAX_CHARS)
    description_source: DescriptionSource | None = None
    metadata: dict[str, Any] | None = None

    _plain_source = field_validator("source", mode="before")(coerce_source)
    _metadata_size = field_validator("metadata")(check_metadata)


class SessionOpenRecord(_Record):
    """First line."""

    record: Literal["session-open"] = "session-open"
    format: Literal["relavium-session/1.0", "relavium-session/1.1"] = JSONL_FORMAT
    session: SessionHeader


class RegisteredAgent(_Record):
    """An agent as the registry knows it (details only for the session's own agent)."""

    id: str = Field(min_length=1, max_length=200)
    name: str | None = None
    description: str | None = None
    model: str | None = None
    provider: str | None = None


class AgentRegisteredRecord(_Record):
    """An agent takes part in the session: its own at the start, others when first seen."""

    record: Literal["agent-registered"] = "agent-registered"
    agent: RegisteredAgent
    timestamp: str = Field(min_length=1)


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

    Written where it happened (``1.0``: after the visible messages); an import restores its
    rows, hidden as they were, and ``messageCount`` does not count it.
    """

    record: Literal["rolled-back-turn"] = "rolled-back-turn"
    user_message_sequence: int = Field(ge=1)
    stop_reason: Literal["aborted", "error"] | None = None
    error_code: str | None = None
    messages: list[RolledBackMessage]


class HandoffJsonlRecord(_Record):
    """Control passed to another agent's child session (a delegation, §2.5).

    ``timestamp``, ``inputFilter``, ``contextMessages`` and ``costCapMicrocents`` are absent
    in ``1.0`` files. An import restores the record (the child session itself is not in the
    file; ``childSessionId`` names it as it was).
    """

    record: Literal["handoff"] = "handoff"
    from_agent: str = Field(min_length=1, max_length=200)
    to_agent: str = Field(min_length=1, max_length=200)
    reason: str
    sequence_number: int = Field(ge=0)
    call_id: str | None = None
    child_session_id: str | None = None
    timestamp: str | None = Field(default=None, min_length=1)
    input_filter: HandoffInputFilter | None = None
    context_messages: int | None = Field(default=None, ge=0)
    cost_cap_microcents: int | None = Field(default=None, ge=0)


class CheckpointJsonlRecord(_Record):
    """An introspection checkpoint (a ``session:checkpoint`` event, §2.5).

    ``timestamp`` is absent in ``1.0`` files.
    """

    record: Literal["checkpoint"] = "checkpoint"
    reason: CheckpointReason
    through_sequence: int = Field(ge=0)
    description: str
    working_memory: str
    timestamp: str | None = Field(default=None, min_length=1)


class ProgressWriteRecord(_Record):
    """The agent wrote its plan (an ``agent:plan_updated`` event): the whole list."""

    record: Literal["progress-write"] = "progress-write"
    entries: list[PlanEntry] = Field(max_length=MAX_PLAN_ENTRIES)
    explanation: str | None = Field(default=None, max_length=MAX_ENTRY_CHARS)
    timestamp: str = Field(min_length=1)


class PeerMessageJsonlRecord(_Record):
    """A peer message (§2.5) the session sent or received, with every delivery; not imported.

    ``direction`` is the exported session's side.
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
    | AgentRegisteredRecord
    | MessageRecord
    | ToolCallRecord
    | ToolResultRecord
    | CompactionRecord
    | RolledBackTurnRecord
    | HandoffJsonlRecord
    | CheckpointJsonlRecord
    | ProgressWriteRecord
    | PeerMessageJsonlRecord
    | SessionCloseRecord,
    Field(discriminator="record"),
]
JSONL_RECORD_ADAPTER: TypeAdapter[JsonlRecord] = TypeAdapter(JsonlRecord)
