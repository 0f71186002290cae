"""The ``session:*`` / ``agent:*`` / ``cost:*`` event contract (``docs/design.md`` §3).

The engine builds a payload (one of the classes below, discriminated on ``type``); the event
bus stamps it with ``sessionId``, ``sequenceNumber`` and ``timestamp`` into a
:class:`StampedEvent`, whose wire form is the flat envelope clients receive.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from relavium_lsp.contracts.base import WireModel
from relavium_lsp.contracts.diff import DiffStat, FileDiff
from relavium_lsp.contracts.plan import AgentPlanUpdated
from relavium_lsp.contracts.replay import ReplayReport
from relavium_lsp.contracts.review import ReviewDecision
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.contracts.terminal import AgentToolOutput
from relavium_lsp.contracts.usage import TokenUsage as TokenUsage  # re-exported: its old home

ErrorCode = Literal[
    "provider_rate_limit",
    "provider_unavailable",
    "provider_auth",
    "validation",
    "content_filter",
    "tool_denied",
    "tool_failed",
    "tool_unavailable",
    "turn_limit",
    "budget_exceeded",
    "cancelled",
    "internal",
]
StopReason = Literal["stop", "length", "tool_use", "content_filter", "error", "aborted"]
ApprovalAction = Literal["fs_write", "process", "egress"]
# context_window: inside a turn, the next request would not fit the model's window (§2.3).
CompactionReason = Literal["threshold", "max_messages", "manual", "context_window"]
# What a session exports to: a workflow scaffold, a JSONL transcript, a readable Markdown one.
ExportFormat = Literal["workflow", "jsonl", "markdown"]

# Declared so clients can reserve handling for them; nothing emits them in this version.
RESERVED_EVENT_TYPES = (
    "agent:directive_injected",
    "agent:context_compacted",
    "agent:context_cleared",
)


class TurnError(WireModel):
    """A typed, user-safe, secret-free error."""

    code: ErrorCode
    message: str
    retryable: bool = False


class ApprovalPreview(WireModel):
    """What the user sees before approving: a path, a command line or a host — no contents."""

    path: str | None = None
    command: str | None = None
    host: str | None = None


class SessionStarted(WireModel):
    """A session opened (or was resumed)."""

    type: Literal["session:started"] = "session:started"
    agent_ref: str
    model: str | None
    context: SessionContext
    resumed: bool = False


class TurnStarted(WireModel):
    """A user message was accepted and a turn began."""

    type: Literal["session:turn_started"] = "session:turn_started"
    user_message_sequence: int


class AgentToken(WireModel):
    """Streamed assistant text (deltas may be coalesced; order is preserved)."""

    type: Literal["agent:token"] = "agent:token"
    token: str
    model: str


class AgentReasoning(WireModel):
    """Streamed reasoning text (never a signature)."""

    type: Literal["agent:reasoning"] = "agent:reasoning"
    text: str
    model: str


class AgentToolCall(WireModel):
    """The model called a tool; ``tool_input`` is sanitized."""

    type: Literal["agent:tool_call"] = "agent:tool_call"
    tool_id: str
    call_id: str
    tool_input: dict[str, Any]
    model: str


class AgentApprovalRequested(WireModel):
    """A side-effecting action waits for the user (``diffStat``: lines a file change adds/removes).

    The durable event keeps no contents; the diff itself goes only to the client that asks.
    """

    type: Literal["agent:approval_requested"] = "agent:approval_requested"
    tool_id: str
    call_id: str
    action: ApprovalAction
    preview: ApprovalPreview
    diff_stat: DiffStat | None = None


class AgentToolResult(WireModel):
    """A tool finished.

    ``diff``: the change a file tool (``write_file``, ``edit_file``) made, so a transcript shows
    it even when no approval was asked ("always allow", ``auto_edits``); its unified text is
    cut after 16,000 characters with a ``[... diff cut: N more lines ...]`` line
    (``truncated``).
    """

    type: Literal["agent:tool_result"] = "agent:tool_result"
    tool_id: str
    call_id: str
    success: bool
    output_summary: str
    duration_ms: int
    error_code: ErrorCode | None = None
    diff: FileDiff | None = None


class CostUpdated(WireModel):
    """Spend after one provider call."""

    type: Literal["cost:updated"] = "cost:updated"
    model: str
    input_tokens: int
    output_tokens: int
    cost_microcents: int
    cumulative_cost_microcents: int
    priced: bool
    # Parts of input_tokens read from / written to the prompt cache (billed at cache rates).
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class TurnCompleted(WireModel):
    """A turn settled; exactly one per turn."""

    type: Literal["session:turn_completed"] = "session:turn_completed"
    stop_reason: StopReason
    tokens_used: TokenUsage
    error: TurnError | None = None
    # A failed or aborted turn that had changed files stays in the transcript, closed by an
    # interruption marker, so the transcript, the checkpoints and the files agree (§2.2).
    kept: bool | None = None


@dataclass(frozen=True)
class TurnResult:
    """How a turn settled, as the engine reports it to whoever sent the message.

    ``session:turn_completed`` carries the same stop reason, usage and error; the sender also
    gets the final text and ``last_sequence``, the newest message in the transcript (not an
    event sequence). The LSP result is built from it by ``SendMessageResult.from_turn``.
    """

    stop_reason: StopReason
    tokens_used: TokenUsage
    error: TurnError | None = None
    text: str = ""
    last_sequence: int = 0
    kept: bool = False  # see TurnCompleted.kept


class SessionCompacting(WireModel):
    """Summarising older history began."""

    type: Literal["session:compacting"] = "session:compacting"
    reason: CompactionReason


class SessionCompacted(WireModel):
    """Older history was summarised (or, inside a turn, old tool results cleared) behind a marker.

    Inside a turn (reason ``context_window``) it also says what left the model's view: how many
    tool results were replaced by notes (their text kept as artifacts) and how many of the
    agent's messages were folded into a summary.
    """

    type: Literal["session:compacted"] = "session:compacted"
    reason: CompactionReason
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    boundary_sequence: int
    cleared_tool_results: int | None = None
    summarized_messages: int | None = None


class SessionTrimmed(WireModel):
    """Older history was dropped from the model's view behind a marker (nothing deleted)."""

    type: Literal["session:trimmed"] = "session:trimmed"
    reason: CompactionReason
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    boundary_sequence: int


class BudgetWarning(WireModel):
    """The pre-egress cost cap was reached (``warn``) or needs approval (``pause``)."""

    type: Literal["session:budget_warning"] = "session:budget_warning"
    on_exceed: Literal["warn", "pause_for_approval"]
    limit_microcents: int
    spent_microcents: int


class SessionExported(WireModel):
    """An export was produced."""

    type: Literal["session:exported"] = "session:exported"
    workflow_path: str
    format: ExportFormat = "workflow"


class SessionRewound(WireModel):
    """Files (and maybe the conversation) went back to before user message ``toSequence``.

    Recorded in the rewound session; ``undone`` when a rewind was undone. Counts only: the
    files are in the ``relavium/rewind`` answer.
    """

    type: Literal["session:rewound"] = "session:rewound"
    rewind_id: str
    to_sequence: int
    forked_session_id: str | None = None
    restored: int
    conflicts: int
    undone: bool = False


class SessionChangesReviewed(WireModel):
    """Files a turn changed were kept or undone (``relavium/reviewChanges``, §6.4).

    ``paths`` are the files whose review this decided (undo: the ones put back); other
    windows update their review from it.
    """

    type: Literal["session:changes_reviewed"] = "session:changes_reviewed"
    user_sequence: int
    decision: ReviewDecision
    paths: list[str]


class AgentHandoff(WireModel):
    """The agent handed a task to another agent's child session (``returned``: it is back).

    Emitted on the parent twice per delegation: when the child starts (``returned`` false)
    and when its answer came back or it ended otherwise (``returned`` true, with how).
    """

    type: Literal["agent:handoff"] = "agent:handoff"
    from_agent: str
    to_agent: str
    reason: str
    child_session_id: str
    returned: bool = False
    stop_reason: StopReason | None = None


CheckpointReason = Literal["manual", "new_session", "turn_limit", "idle"]


class SessionCheckpoint(WireModel):
    """An introspection checkpoint: what the agent knew and decided up to a message (§2.5).

    ``working_memory`` is given to the agent with every later turn; ``description`` became
    the session's description (source ``introspection``).
    """

    type: Literal["session:checkpoint"] = "session:checkpoint"
    reason: CheckpointReason
    through_sequence: int
    description: str
    working_memory: str
    # The workspace memory revision this checkpoint's proposal made (absent: none, §2.6).
    # Set by older releases only: a pass now proposes (``memoryProposalId``) instead.
    workspace_memory_revision: int | None = None
    # The proposal of workspace-memory changes this checkpoint left for the user to accept
    # (``relavium/listMemoryProposals``; absent: it proposed none, §2.6).
    memory_proposal_id: str | None = None


class SessionCheckpointFailed(WireModel):
    """An automatic introspection pass failed; the session is untouched (§2.5)."""

    type: Literal["session:checkpoint_failed"] = "session:checkpoint_failed"
    reason: CheckpointReason
    message: str


class SessionMessageAppended(WireModel):
    """A note was added to the transcript without a turn (``relavium/appendMessage``)."""

    type: Literal["session:message_appended"] = "session:message_appended"
    message_sequence: int
    role: Literal["user", "system"]


class SessionReplayCompleted(WireModel):
    """A replay finished (on the replay session, after its last turn): how it went (§9)."""

    type: Literal["session:replay_completed"] = "session:replay_completed"
    report: ReplayReport


class SessionCancelled(WireModel):
    """The session ended (the only terminal event)."""

    type: Literal["session:cancelled"] = "session:cancelled"


EventPayload = Annotated[
    SessionStarted
    | TurnStarted
    | AgentToken
    | AgentReasoning
    | AgentToolCall
    | AgentApprovalRequested
    | AgentToolOutput
    | AgentToolResult
    | AgentPlanUpdated
    | CostUpdated
    | TurnCompleted
    | SessionCompacting
    | SessionCompacted
    | SessionTrimmed
    | BudgetWarning
    | SessionExported
    | SessionRewound
    | SessionChangesReviewed
    | SessionMessageAppended
    | SessionCheckpoint
    | SessionCheckpointFailed
    | AgentHandoff
    | SessionReplayCompleted
    | SessionCancelled,
    Field(discriminator="type"),
]
EVENT_PAYLOAD_ADAPTER: TypeAdapter[EventPayload] = TypeAdapter(EventPayload)
_ENVELOPE_KEYS = ("sessionId", "sequenceNumber", "timestamp")


class StampedEvent(WireModel):
    """An event as delivered and stored: payload plus the bus's stamp."""

    session_id: str
    sequence_number: int = Field(ge=1)
    timestamp: str
    payload: EventPayload

    @property
    def type(self) -> str:
        """The payload's event type."""
        return self.payload.type

    def to_wire(self) -> dict[str, Any]:
        """The flat envelope: ``{type, sessionId, sequenceNumber, timestamp, ...payload}``."""
        envelope = self.payload.to_wire()
        envelope.update(
            sessionId=self.session_id,
            sequenceNumber=self.sequence_number,
            timestamp=self.timestamp,
        )
        return envelope

    @classmethod
    def from_wire(cls, envelope: dict[str, Any]) -> StampedEvent:
        """Parse a flat envelope back into a stamped event (validating the payload)."""
        payload = {key: value for key, value in envelope.items() if key not in _ENVELOPE_KEYS}
        return cls(
            session_id=envelope["sessionId"],
            sequence_number=envelope["sequenceNumber"],
            timestamp=envelope["timestamp"],
            payload=EVENT_PAYLOAD_ADAPTER.validate_python(payload),
        )
