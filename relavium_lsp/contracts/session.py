"""Sessions, their context and their durable messages (``docs/design.md`` §2)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from relavium_lsp.contracts.base import WireModel
from relavium_lsp.contracts.content import DurableContentPart

FsScopeTier = Literal["sandboxed", "project", "full"]
SessionStatus = Literal["idle", "streaming", "awaiting_approval", "ended"]
MessageRole = Literal["system", "user", "assistant", "tool"]

SESSION_STATUSES: tuple[SessionStatus, ...] = ("idle", "streaming", "awaiting_approval", "ended")


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


class CompactionMarker(WireModel):
    """Marks a system message as a compaction boundary."""

    dropped_through_sequence: int = Field(ge=0)
    mode: Literal["summarize", "trim"] = "trim"


class InterruptionMarker(WireModel):
    """Marks a system message recording that a turn never finished (crash or kill)."""

    interrupted_after_sequence: int = Field(ge=0)
    reason: Literal["crash"] = "crash"


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
    source: str = "cli"
    totals: SessionTotals = Field(default_factory=SessionTotals)
    message_count: int = 0
    turn_count: int = 0
    last_message_preview: str | None = None
    exported_workflow_path: str | None = None
    created_at: str
    updated_at: str
    deleted_at: str | None = None


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
