"""The contract between the engine and the tool registry.

The engine hands every tool call the model makes to :meth:`ToolDispatcher.dispatch` with a
:class:`ToolCallContext`; dispatch validates, applies policy and approvals, runs the tool,
emits ``agent:tool_call`` / ``agent:tool_result`` through ``emit`` and returns a
:class:`ToolAnswer`: the bounded :class:`~relavium_lsp.contracts.content.ToolResultPart` the
model reads next, plus any media the tool returned (the ``agent:tool_result`` event carries
the error code and duration). It never raises for a tool failure — only
``asyncio.CancelledError`` escapes. Questions to the user go through
``ask_user`` (which also emits ``agent:approval_requested``); what the user allowed for the
rest of the session is kept in one :class:`ApprovalMemory`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.content import ContentPart, MediaPart, ToolCallPart, ToolResultPart
from relavium_lsp.contracts.delegation import InputFilterKind
from relavium_lsp.contracts.events import EventPayload
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.llm.seam import ToolSpec
from relavium_lsp.tools.host import Approver, EditorHost

if TYPE_CHECKING:
    from relavium_lsp.tools.definition import ToolDefinition

SideEffect = Literal["read", "fs_write", "process", "egress"]
EventSink = Callable[[EventPayload], None]


class ChangeJournal(Protocol):
    """The turn's file checkpoints: told around every change a tool makes to a file.

    Telling only notes (no I/O on the event loop); :meth:`commit` writes the notes so far in
    one transaction. A tool commits before its change reaches the editor, so a file's earlier
    text is stored before it is overwritten; after its change it queues the write of the
    ``after`` note without waiting (:meth:`commit_later`).
    """

    def before_change(self, path: Path, text: str | None) -> None:
        """``path`` is about to change; ``text`` is what it holds now (``None``: absent)."""
        ...

    def after_change(self, path: Path, text: str | None) -> None:
        """``path`` now holds ``text`` (``None``: it was deleted)."""
        ...

    async def commit(self) -> None:
        """Write every note told so far (one transaction); returns once it is committed."""
        ...

    def commit_later(self) -> None:
        """Queue a write of the notes so far without waiting for it."""
        ...

    @property
    def changed_files(self) -> bool:
        """Whether a change to a file began in this turn (its transcript is then kept)."""
        ...


class ArtifactStore(Protocol):
    """Where full tool outputs are kept when the model only sees a bounded preview."""

    async def save_artifact(self, session_id: str, call_id: str, text: str) -> str:
        """Store ``text`` and return its artifact id."""
        ...

    async def load_artifact(self, session_id: str, artifact_id: str) -> str | None:
        """Return a stored artifact of this session, or ``None``."""
        ...


class ApprovalMemory:
    """The session's "always allow" answers, as ``(tool id, scope key)`` pairs.

    One per session, shared by everything that asks: the tool approval gate (scope keys are
    chosen by each tool, see :mod:`relavium_lsp.tools.approval`) and the cost cap.
    """

    def __init__(self) -> None:
        self._allowed: set[tuple[str, str]] = set()

    def allows(self, tool_id: str, scope_key: str) -> bool:
        """Whether the user already allowed this tool in this scope for the session."""
        return (tool_id, scope_key) in self._allowed

    def remember(self, tool_id: str, scope_key: str) -> None:
        """Record an "always allow for this session" answer."""
        self._allowed.add((tool_id, scope_key))

    def remembered(self) -> frozenset[tuple[str, str]]:
        """Everything allowed so far."""
        return frozenset(self._allowed)


@dataclass(frozen=True)
class DelegationRequest:
    """What the ``delegate`` tool asks for: an agent of the workspace, a task, a reason."""

    agent: str
    task: str
    reason: str
    # The handoff input filter the call chose (None: the agent's configured one).
    input_filter: InputFilterKind | None = None
    last_n: int | None = None
    strip_tool_results: bool | None = None


@dataclass(frozen=True)
class DelegationOutcome:
    """How a delegation ended: the child's final answer (or why there is none)."""

    text: str
    failed: bool = False
    child_session_id: str | None = None


@dataclass(frozen=True)
class PeerRequest:
    """What ``message_session`` asks for.

    A recipient (a session id, or an agent whose newest session of this workspace gets it),
    the text, and whether to wait for the reply.
    """

    to: str
    text: str
    await_reply: bool = False
    call_id: str | None = None


class Delegator(Protocol):
    """Runs work in other sessions for the calling session (the engine implements it, §2.5)."""

    async def delegate(self, request: DelegationRequest) -> DelegationOutcome:
        """Start a child session with the named agent, run the task, return its answer."""
        ...

    async def message_peer(self, request: PeerRequest) -> DelegationOutcome:
        """Send a peer message to another session; its reply when awaited, else a receipt."""
        ...


@dataclass
class ToolCallContext:
    """Everything a tool call may use; built by the engine once per turn.

    ``host`` reads and writes files through the editor; questions to the user go through
    ``ask_user`` (the session's one way to ask: it emits ``agent:approval_requested``, shows the
    session as waiting and applies the approval timeout), never ``host.request_approval``.
    """

    session_id: str
    context: SessionContext
    policy: EffectiveChatPolicy
    host: EditorHost
    emit: EventSink
    ask_user: Approver
    artifacts: ArtifactStore
    model: str
    allowed_tools: frozenset[str]
    temp_dir: Path
    approvals: ApprovalMemory = field(default_factory=ApprovalMemory)
    # Shown in the editor's undo label for agent edits ("Relavium: <title or id>").
    session_title: str | None = None
    # Extra locations no tool may touch in any tier (e.g. a custom history database folder).
    protected_paths: tuple[Path, ...] = ()
    # Tools resolved for this turn beyond the built-ins (an MCP server's), by name.
    turn_tools: Mapping[str, ToolDefinition[Any]] = field(default_factory=dict)
    # The call being run (set by the registry for each call): what live output is tagged with.
    call_id: str = ""
    # The turn's file checkpoints; None keeps none (tests, replays).
    journal: ChangeJournal | None = None
    # What the ``delegate`` tool hands child sessions to (None: delegation unavailable).
    delegator: Delegator | None = None


@dataclass(frozen=True)
class ToolAnswer:
    """One call's answer: the bounded result, then binary parts the tool returned (images)."""

    result: ToolResultPart
    media: tuple[MediaPart, ...] = ()

    def parts(self) -> list[ContentPart]:
        """The tool message's parts, result first."""
        return [self.result, *self.media]


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


class SessionResources(Protocol):
    """What tools hold for a session beyond a call (background terminals): freed with it."""

    async def release_session(self, session_id: str) -> None:
        """The session ended: stop what it still runs."""
        ...

    async def close(self) -> None:
        """The engine is shutting down: stop everything."""
        ...


async def release_session_tools(tools: object, session_id: str) -> None:
    """Tell a dispatcher that holds session resources that the session ended (if it does)."""
    release = getattr(tools, "release_session", None)
    if release is not None:
        await release(session_id)


async def close_tools(tools: object) -> None:
    """Stop whatever a dispatcher still runs (if it holds anything)."""
    close = getattr(tools, "close_resources", None)
    if close is not None:
        await close()


class ToolDispatcher(Protocol):
    """The engine's view of the tool registry."""

    def specs(self, names: Iterable[str]) -> list[ToolSpec]:
        """LLM-visible specs for the named tools (unknown names are skipped)."""
        ...

    async def select(self, entries: Sequence[str], ctx: ToolCallContext) -> ToolSelection:
        """The tools an agent's ``tools`` entries give one turn (may start MCP servers)."""
        ...

    async def dispatch(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolAnswer:
        """Run one call under policy; never raises except for cancellation."""
        ...
