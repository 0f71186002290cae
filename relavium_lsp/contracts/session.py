"""Sessions, their context and their durable messages (``docs/design.md`` §2)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from relavium_lsp.contracts.base import WireModel, compact_json
from relavium_lsp.contracts.content import DurableContentPart
from relavium_lsp.contracts.delegation import HandoffInputFilter
from relavium_lsp.contracts.usage import TokenUsage

FsScopeTier = Literal["sandboxed", "project", "full"]
# failed: the last turn ended on a provider or tool failure (not an abort, not a crash);
# awaiting_peer: the session waits for a child session it delegated to (§2.5);
# inactive: a settled session nobody touched for the idle time (engine/sessions/inactive.py).
SessionStatus = Literal[
    "idle", "streaming", "awaiting_approval", "awaiting_peer", "failed", "ended", "inactive"
]
MessageRole = Literal["system", "user", "assistant", "tool"]
# Roles whose rows always name the agent that wrote them (seed 001: one author per message).
AGENT_AUTHORED_ROLES: frozenset[MessageRole] = frozenset({"assistant", "tool"})
DescriptionSource = Literal["user", "agent", "introspection"]

SESSION_STATUSES: tuple[SessionStatus, ...] = (
    "idle",
    "streaming",
    "awaiting_approval",
    "awaiting_peer",
    "failed",
    "ended",
    "inactive",
)
# Session metadata is for runtime hints and UI state, not storage: its JSON stays small.
METADATA_MAX_BYTES = 16 * 1024
DESCRIPTION_MAX_CHARS = 2000


def check_metadata(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """Refuse session metadata whose compact JSON is larger than :data:`METADATA_MAX_BYTES`."""
    if value is None:
        return None
    size = len(compact_json(value).encode())
    if size > METADATA_MAX_BYTES:
        raise ValueError(
            f"metadata is {size} bytes of JSON; at most {METADATA_MAX_BYTES} are allowed"
        )
    return value


# Sources that no person drives: a replay re-runs recordings (§9).
NON_INTERACTIVE_SOURCES = frozenset({"replay"})


class SessionSource(WireModel):
    """Who opened a session and how (seed 002's ``SessionSource``).

    ``kind`` is the surface: ``vscode``, ``neovim``, ``acp``, ``cli``, ``replay``, or the
    name another LSP client gives. ``interactive``: a person drives it (false for a replay
    and a delegated child). ``platform``: the client program, when it said. ``triggerId``:
    what started a session no person opened (the replayed session, a delegating parent).
    ``type``: ``direct`` (one user; every session here) or ``group``.
    """

    kind: str = Field(min_length=1, max_length=64)
    interactive: bool = True
    platform: str | None = Field(default=None, max_length=100)
    trigger_id: str | None = Field(default=None, max_length=200)
    type: Literal["direct", "group"] | None = None

    @classmethod
    def of_kind(cls, kind: str) -> SessionSource:
        """The source a plain string names (what releases before the object stored)."""
        return cls(kind=kind, interactive=kind not in NON_INTERACTIVE_SOURCES)


def coerce_source(value: Any) -> Any:
    """A plain string is the ``kind`` of a source (older rows, exports and clients)."""
    return SessionSource.of_kind(value).to_wire() if isinstance(value, str) else value


class Selection(WireModel):
    """A selected line range; the selected text itself is never stored in context."""

    file: str = Field(min_length=1, max_length=4096)
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> Selection:
        if self.end_line < self.start_line:
            raise ValueError("endLine must not be before startLine")
        return self


class SessionContext(WireModel):
    """The workspace situation a session runs against."""

    working_dir: str = Field(min_length=1, max_length=4096)
    active_file: str | None = Field(default=None, max_length=4096)
    selection: Selection | None = None
    git_ref: str | None = Field(default=None, max_length=256)
    fs_scope_tier: FsScopeTier = "sandboxed"
    variables: dict[str, str] | None = None

    @model_validator(mode="after")
    def _bounded_variables(self) -> SessionContext:
        if self.variables is not None:
            if len(self.variables) > 64:
                raise ValueError("variables may hold at most 64 entries")
            for key, value in self.variables.items():
                if not key.replace("_", "").replace("-", "").isalnum() or len(key) > 64:
                    raise ValueError(f"variable name {key[:64]!r} must be alphanumeric")
                if len(value) > 8192:
                    raise ValueError(f"variable {key!r} is longer than 8192 characters")
        return self


class PartialSessionContext(WireModel):
    """Client overrides for an auto-detected :class:`SessionContext` (every field optional)."""

    working_dir: str | None = Field(default=None, min_length=1, max_length=4096)
    active_file: str | None = Field(default=None, max_length=4096)
    selection: Selection | None = None
    git_ref: str | None = Field(default=None, max_length=256)
    fs_scope_tier: FsScopeTier | None = None
    variables: dict[str, str] | None = None

    def apply_to(self, detected: SessionContext) -> SessionContext:
        """Overlay the fields the client set on the detected context, then re-validate.

        Only fields set on either side are passed on, so the result still tells an explicit
        ``fsScopeTier`` from a default one (``model_fields_set``; explicit tiers only narrow).
        """
        merged = detected.model_dump(exclude_unset=True)
        merged.update(self.model_dump(exclude_unset=True))
        return SessionContext.model_validate(merged)


class ViewMessage(WireModel):
    """One message of a compaction marker's view: its role and how many of its parts it holds."""

    role: Literal["user", "assistant", "tool"]
    parts: int = Field(ge=1)


class CompactionMarker(WireModel):
    """Marks a system message as a compaction boundary.

    ``view`` is set by compaction inside a turn (``docs/design.md`` §2.3): the marker's
    content is then the model's view of everything at or before the boundary, message by
    message (``parts`` of the content each, in order) — the user's messages verbatim, old tool
    results replaced by notes naming their artifacts (``clear``), older rounds by a summary
    (``summarize``). Without it the content is one summary (or a trim note).
    """

    dropped_through_sequence: int = Field(ge=0)
    mode: Literal["summarize", "trim", "clear"] = "trim"
    view: list[ViewMessage] | None = None


# crash: the process died mid-turn (marked when the session is next loaded); error / aborted:
# the turn failed or was aborted after it changed files, so its messages were kept (§2.2).
InterruptionReason = Literal["crash", "error", "aborted"]


class InterruptionMarker(WireModel):
    """Marks a system message recording that a turn never finished (crash, failure, abort)."""

    interrupted_after_sequence: int = Field(ge=0)
    reason: InterruptionReason = "crash"


class SessionMessage(WireModel):
    """One durable message: append-only, never edited."""

    id: str
    session_id: str
    sequence_number: int = Field(ge=1)
    role: MessageRole
    content: list[DurableContentPart]
    model_id: str | None = None
    compaction: CompactionMarker | None = None
    interruption: InterruptionMarker | None = None
    timestamp: str
    # What the provider calls behind an assistant message used and cost (fallback attempts
    # included); absent on other roles and on rows written before schema version 5.
    token_usage: TokenUsage | None = None
    cost_microcents: int | None = None
    # The message this one answers: a user message follows the previous visible message, an
    # assistant message answers the turn's user message (or the tool round before it), a
    # tool result answers the assistant message that asked for it.
    parent_message_id: str | None = None
    # The agent that wrote it: every assistant message, and a delegated task (the delegator).
    agent_slug: str | None = None


class RolledBackTurn(WireModel):
    """A turn that failed or was aborted: out of the visible transcript, its rows kept.

    Exports carry these beside the visible messages so history reads as what happened;
    ``stop_reason`` / ``error_code`` come from the turn's ``session:turn_completed`` event.
    """

    user_message_sequence: int = Field(ge=1)
    stop_reason: Literal["aborted", "error"] | None = None
    error_code: str | None = None
    messages: list[SessionMessage]


class HandoffRecord(WireModel):
    """Control passed from one agent to another: a delegation to a child session (§2.5).

    ``sequence_number`` is the parent's assistant message that asked for it.
    """

    id: str
    session_id: str
    child_session_id: str | None = None
    from_agent: str
    to_agent: str
    reason: str
    sequence_number: int = Field(ge=0)
    call_id: str | None = None
    created_at: str
    # The child's own cost cap (what was left under the parent's when it started), kept so a
    # child resumed after a restart still obeys it; None: no cap.
    cost_cap_microcents: int | None = Field(default=None, ge=0)
    # What of the parent's conversation the child received, and how many messages that was.
    input_filter: HandoffInputFilter | None = None
    context_messages: int | None = Field(default=None, ge=0)


class ForkOrigin(WireModel):
    """Where a forked session came from: the source session and the last copied message."""

    session_id: str
    message_id: str | None = None
    sequence_number: int = Field(ge=0)


class SessionTotals(WireModel):
    """Token and cost totals; ``cost_microcents`` always equals the sum of session_costs."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_microcents: int = 0


class AgentSessionRecord(WireModel):
    """The session row."""

    id: str
    agent_slug: str
    agent_snapshot: dict[str, Any]
    title: str | None = None
    model_id: str | None = None
    context: SessionContext
    status: SessionStatus = "idle"
    source: SessionSource = Field(default_factory=lambda: SessionSource(kind="cli"))
    totals: SessionTotals = Field(default_factory=SessionTotals)
    message_count: int = 0
    turn_count: int = 0
    last_message_preview: str | None = None
    exported_workflow_path: str | None = None
    created_at: str
    updated_at: str
    deleted_at: str | None = None
    description: str | None = Field(default=None, max_length=DESCRIPTION_MAX_CHARS)
    description_source: DescriptionSource | None = None
    metadata: dict[str, Any] | None = None
    forked_from: ForkOrigin | None = None
    parent_session_id: str | None = None

    _metadata_size = field_validator("metadata")(check_metadata)
    _plain_source = field_validator("source", mode="before")(coerce_source)


class SessionSummary(WireModel):
    """One row of ``listSessions``."""

    id: str
    title: str | None = None
    agent_ref: str
    status: SessionStatus
    updated_at: str
    message_count: int
    preview: str | None = None
    working_dir: str
    description: str | None = None
    parent_session_id: str | None = None
    deleted_at: str | None = None
    # The exchanges a user counts (one per message they sent); ``messageCount`` counts rows.
    turn_count: int = 0
