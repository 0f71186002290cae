"""The contract between the engine and the tool registry.

The engine hands every tool call the model makes to :meth:`ToolDispatcher.dispatch` with a
:class:`ToolCallContext`; dispatch validates, applies policy and approvals, runs the tool,
emits ``agent:tool_call`` / ``agent:approval_requested`` / ``agent:tool_result`` through
``emit`` and returns a bounded :class:`ToolOutcome`. It never raises for a tool failure —
only ``asyncio.CancelledError`` escapes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.content import MediaPart, ToolCallPart
from relavium_lsp.contracts.events import ErrorCode, EventPayload
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.llm.seam import ToolSpec
from relavium_lsp.tools.host import EditorHost

if TYPE_CHECKING:
    from relavium_lsp.tools.definition import ToolDefinition

SideEffect = Literal["read", "fs_write", "process", "egress"]
EventSink = Callable[[EventPayload], None]


class ArtifactStore(Protocol):
    """Where full tool outputs are kept when the model only sees a bounded preview."""

    async def save_artifact(self, session_id: str, call_id: str, text: str) -> str:
        """Store ``text`` and return its artifact id."""
        ...

    async def load_artifact(self, session_id: str, artifact_id: str) -> str | None:
        """Return a stored artifact of this session, or ``None``."""
        ...


@dataclass
class ToolCallContext:
    """Everything a tool call may use; built by the engine once per turn."""

    session_id: str
    context: SessionContext
    policy: EffectiveChatPolicy
    host: EditorHost
    emit: EventSink
    artifacts: ArtifactStore
    model: str
    allowed_tools: frozenset[str]
    temp_dir: Path
    # (tool id, scope key) pairs the user answered "always allow for this session" for.
    always_allowed: set[tuple[str, str]] = field(default_factory=set)
    # Shown in the editor's undo label for agent edits ("Relavium: <title or id>").
    session_title: str | None = None
    # Extra locations no tool may touch in any tier (e.g. a custom history database folder).
    protected_paths: tuple[Path, ...] = ()
    # Tools resolved for this turn beyond the built-ins (an MCP server's), by name.
    turn_tools: Mapping[str, ToolDefinition[Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolOutcome:
    """What goes back to the model for one call (``result`` is already bounded)."""

    result: str
    is_error: bool = False
    error_code: ErrorCode | None = None
    duration_ms: int = 0
    # Binary parts (images…) that belong with the result in the tool message.
    media: tuple[MediaPart, ...] = ()


@dataclass(frozen=True)
class ToolSelection:
    """The tools of one turn: what the model sees, what may run, and the turn's extra tools."""

    specs: list[ToolSpec]
    allowed: frozenset[str]
    turn_tools: Mapping[str, ToolDefinition[Any]] = field(default_factory=dict)


class ToolSource(Protocol):
    """Tools that exist only at run time (an MCP server's), chosen by agent ``tools`` entries."""

    def claims(self, entry: str) -> bool:
        """Whether an agent ``tools`` entry (e.g. ``mcp:NAME``) belongs to this source."""
        ...

    async def resolve(
        self, entries: Sequence[str], ctx: ToolCallContext
    ) -> list[ToolDefinition[Any]]:
        """The definitions for this session's turn (entries may be empty).

        Those the entries select, plus any the session was given by other means (an ACP
        client's MCP servers).
        """
        ...


class ToolDispatcher(Protocol):
    """The engine's view of the tool registry."""

    def specs(self, names: Iterable[str]) -> list[ToolSpec]:
        """LLM-visible specs for the named tools (unknown names are skipped)."""
        ...

    async def select(self, entries: Sequence[str], ctx: ToolCallContext) -> ToolSelection:
        """The tools an agent's ``tools`` entries give one turn (may start MCP servers)."""
        ...

    async def dispatch(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
        """Run one call under policy; never raises except for cancellation."""
        ...
