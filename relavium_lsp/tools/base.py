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

What a tool is, as the registry sees it: a :class:`ToolDefinition` pairs the model-visible surface
(name, description, a pydantic arguments model whose JSON Schema the model sees) with what only
configuration decides: the side-effect class that drives the approval gate, the replay class used by
export/replay, and the limits in :class:`ToolLimits`. The model can never set a limit: every
arguments model forbids unknown fields, so ``{"timeout": 9999}`` is a validation error, not an
override.

Running a call has two steps. ``prepare`` applies policy (scope jail, allowlists, the egress
guard) without side effects and returns a :class:`PreparedCall`; the gate then asks for
approval if ``PreparedCall.approval`` says so; only then does ``PreparedCall.run`` act.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.content import ContentPart, MediaPart, ToolCallPart, ToolResultPart
from relavium_lsp.contracts.delegation import InputFilterKind
from relavium_lsp.contracts.diff import FileDiff
from relavium_lsp.contracts.events import ApprovalAction, ApprovalPreview, ErrorCode, EventPayload
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.llm.seam import ToolSpec
from relavium_lsp.paths import relavium_home
from relavium_lsp.tools.host import Approver, EditorHost, FileChange
from relavium_lsp.tools.jail import ScopeRoots

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

    def scope_roots(self) -> ScopeRoots:
        """The filesystem roots this call's session context and policy allow."""
        return ScopeRoots.build(
            self.context.working_dir,
            self.context.fs_scope_tier,
            self.temp_dir,
            self.policy.allowed_paths,
            forbidden=(relavium_home(), *self.protected_paths),
        )


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


# How a replay treats a tool (contracts/replay.py has the table): ``pure`` and ``read-only``
# tools may run again; ``external-stateful`` ones read state outside the workspace and the
# recording (the editor, a remote server) and run again only in a ``live`` replay;
# ``side-effecting`` ones never run in a replay.
ReplayClass = Literal["pure", "read-only", "external-stateful", "side-effecting"]


class ToolArgs(BaseModel):
    """Base of every tool's arguments: camelCase keys as the model sends them, nothing extra."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        extra="forbid",
        frozen=True,
    )


ArgsT = TypeVar("ArgsT", bound=ToolArgs)


@dataclass(frozen=True)
class ToolLimits:
    """Config-only bounds for the built-in tools (never model-settable)."""

    read_max_bytes: int = 10 * 1024 * 1024
    write_max_bytes: int = 5 * 1024 * 1024
    list_max_entries: int = 2_000
    list_max_depth: int = 6
    search_max_matches: int = 500
    # Below the 50 KB the model sees whole (tools/bounding.py), so a search is never cut.
    search_max_output_bytes: int = 48_000
    find_max_results: int = 1_000
    search_max_file_bytes: int = 2 * 1024 * 1024
    search_timeout_s: float = 15.0
    command_timeout_s: float = 120.0
    command_max_output_bytes: int = 1024 * 1024
    terminal_max_jobs: int = 4
    terminal_max_lifetime_s: float = 3600.0
    git_timeout_s: float = 30.0
    http_timeout_s: float = 30.0
    http_max_response_bytes: int = 2 * 1024 * 1024
    http_max_redirects: int = 5


@dataclass(frozen=True)
class ToolRun:
    """What a tool produced; ``failed`` marks a result the model should read as an error.

    ``media`` (images and other binary parts an MCP tool returned) is kept beside the text
    result in the tool message; the text should mention it.
    """

    text: str
    failed: bool = False
    error_code: ErrorCode | None = None
    media: tuple[MediaPart, ...] = ()
    # The change a file tool made, for the transcript (``agent:tool_result``), not the model.
    diff: FileDiff | None = None


@dataclass(frozen=True)
class ApprovalNeed:
    """What the approval gate needs to decide about one side-effecting call.

    ``scope_key`` is what "always allow for this session" remembers together with the tool
    id; ``inside_workspace`` lets ``auto_edits`` approve writes that stay in the workspace;
    ``protected`` (the matching pattern, see :mod:`~relavium_lsp.tools.protected`) makes the
    call ask whatever the mode or remembered answers; ``change`` is the file change a write
    makes (its diff goes with the question).
    """

    action: ApprovalAction
    preview: ApprovalPreview
    scope_key: str
    inside_workspace: bool = False
    protected: str | None = None
    change: FileChange | None = None


@dataclass(frozen=True)
class PreparedCall:
    """A call that passed policy: what to ask (if anything) and what to run afterwards."""

    run: Callable[[], Awaitable[ToolRun]]
    approval: ApprovalNeed | None = None


@dataclass(frozen=True)
class ToolDefinition(Generic[ArgsT]):
    """One tool: its model-visible surface, its policy classes and its implementation.

    ``summarized_fields`` are argument fields shown in events only as length + head (file
    contents, request bodies); ``redacted_fields`` never appear in events at all.
    ``always_ask`` forces the approval prompt whatever the mode or remembered answers.
    ``bounded_by_artifact`` is off only for ``read_tool_output``, which pages by itself.
    ``input_schema`` is set for tools whose arguments are described by someone else's JSON
    Schema (MCP tools): the model sees it as is, and ``args_model`` checks it. ``available``
    hides a tool from turns whose context cannot run it (no client support).
    """

    name: str
    description: str
    args_model: type[ArgsT]
    side_effect: SideEffect
    replay: ReplayClass
    prepare: Callable[[ArgsT, ToolCallContext], Awaitable[PreparedCall]]
    summarized_fields: frozenset[str] = frozenset()
    redacted_fields: frozenset[str] = frozenset()
    always_ask: bool = False
    bounded_by_artifact: bool = True
    input_schema: dict[str, Any] | None = None
    # When set, the tool exists for a turn only if this says so (editor tools need a client
    # that answers them); otherwise the model never sees it.
    available: Callable[[ToolCallContext], bool] | None = None

    def parameters_schema(self) -> dict[str, Any]:
        """The JSON Schema the model sees (camelCase keys, no extra properties)."""
        if self.input_schema is not None:
            return dict(self.input_schema)
        schema: dict[str, Any] = _without_titles(
            _inlined(self.args_model.model_json_schema(by_alias=True))
        )
        # The class docstring is for developers; the tool description speaks to the model.
        schema.pop("description", None)
        return schema


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with nested models' ``$ref``s replaced by their definitions.

    Some providers' tool-schema validators refuse ``$defs``; argument models never recurse.
    """
    definitions = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str) and reference.startswith("#/$defs/"):
                return resolve(definitions[reference.removeprefix("#/$defs/")])
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


def _without_titles(node: Any) -> Any:
    """Drop pydantic's generated ``title`` keys: noise for the model, not constraints."""
    if isinstance(node, dict):
        return {
            key: _without_titles(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_without_titles(item) for item in node]
    return node
