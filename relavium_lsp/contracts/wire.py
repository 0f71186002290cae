"""Params and results of the custom JSON-RPC methods (``docs/design.md`` §4 wire shapes)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from relavium_lsp.contracts.base import WireModel
from relavium_lsp.contracts.config import ApprovalMode
from relavium_lsp.contracts.content import ContentPart
from relavium_lsp.contracts.diff import FileDiff
from relavium_lsp.contracts.editor_tools import EditorFeature
from relavium_lsp.contracts.events import (
    ApprovalAction,
    ApprovalPreview,
    ExportFormat,
    StopReason,
    TokenUsage,
    TurnError,
    TurnResult,
)
from relavium_lsp.contracts.plan import PlanEntry
from relavium_lsp.contracts.session import (
    DESCRIPTION_MAX_CHARS,
    AgentSessionRecord,
    PartialSessionContext,
    SessionContext,
    SessionMessage,
    SessionSource,
    SessionStatus,
    SessionSummary,
    check_metadata,
)

SessionId = str
MAX_MESSAGE_CHARS = 200_000
MAX_PAGE = 500


class EmptyParams(WireModel):
    """Params of methods that take none (``null`` and ``{}`` are both accepted)."""


class _SessionRef(WireModel):
    session_id: SessionId = Field(min_length=1, max_length=64)


class StartSessionParams(WireModel):
    """``relavium/startSession``: open a new session, or reopen one (get-or-create, seed 003).

    With ``sessionId`` the session is reopened as ``resumeSession`` does (an ended or inactive
    one becomes idle again): it keeps its agent, context and original ``source``, the given
    ``metadata`` is merged into its own (key by key), and the other fields are not used.
    Without it a new session is created. ``source`` is who opens it: an object (seed 002's
    ``{kind, interactive, platform?, triggerId?, type?}``) or just its kind; by default the
    client's name.
    """

    session_id: SessionId | None = Field(default=None, min_length=1, max_length=64)
    agent_ref: str | None = Field(default=None, min_length=1, max_length=200)
    context: PartialSessionContext | None = None
    title: str | None = Field(default=None, max_length=500)
    source: SessionSource | Annotated[str, Field(min_length=1, max_length=64)] | None = None
    description: str | None = Field(default=None, max_length=DESCRIPTION_MAX_CHARS)
    # Runtime hints and UI state (at most 16 KiB of JSON; stored and exported, never secrets).
    metadata: dict[str, Any] | None = None
    # The user chose a working directory at / or their home directory (refused otherwise:
    # the sandbox would be every file under it).
    allow_broad_working_dir: bool = False

    _metadata_size = field_validator("metadata")(check_metadata)


class StartSessionResult(WireModel):
    """Result of ``relavium/startSession``."""

    session_id: SessionId
    agent_ref: str
    model: str | None
    context: SessionContext
    status: SessionStatus
    # False when ``sessionId`` named an existing session, which was reopened.
    created: bool = True


ProgressToken = int | str


class SendMessageParams(_SessionRef):
    """``relavium/sendMessage``.

    ``wait``: answer when the turn settles (:class:`SendMessageResult`, the default of the
    request) or as soon as the message is accepted (:class:`SendMessageAccepted`, the default
    of the ``relavium.sendMessage`` command); the settled turn then arrives as the
    ``session:turn_completed`` event. ``workDoneToken``: the turn reports ``$/progress``
    (begin, report, end) on this token.
    """

    text: str = Field(max_length=MAX_MESSAGE_CHARS)
    attachments: list[ContentPart] | None = Field(default=None, max_length=20)
    wait: bool | None = None
    work_done_token: ProgressToken | None = None


class SendMessageResult(WireModel):
    """Result of ``relavium/sendMessage`` (the settled turn)."""

    stop_reason: StopReason
    tokens_used: TokenUsage
    error: TurnError | None = None
    text: str
    # The sequence number of the newest message in the transcript (not an event sequence).
    last_sequence: int

    @classmethod
    def from_turn(cls, turn: TurnResult) -> SendMessageResult:
        """The result of a settled turn, as the client receives it."""
        return cls(
            stop_reason=turn.stop_reason,
            tokens_used=turn.tokens_used,
            error=turn.error,
            text=turn.text,
            last_sequence=turn.last_sequence,
        )


class SendMessageAccepted(WireModel):
    """Result of ``relavium/sendMessage`` with ``wait: false``: the turn runs on.

    Answered once the turn's ``session:turn_started`` event has been sent. Without
    ``userMessageSequence`` the turn ended before the message was recorded (a turn limit, an
    abort): its ``session:turn_completed`` event, already sent, says why.
    """

    accepted: Literal[True] = True
    user_message_sequence: int | None = None
    # The sequence number of the turn's session:turn_started event: later events are its own.
    turn_started_sequence: int | None = None


class AbortTurnParams(_SessionRef):
    """``relavium/abortTurn``."""


class AbortTurnResult(WireModel):
    """Result of ``relavium/abortTurn``."""

    aborted: bool


class SessionRefParams(_SessionRef):
    """Params of methods that only name a session (cancel, resume, delete)."""


class ResumeSessionResult(WireModel):
    """Result of ``relavium/resumeSession``."""

    session: AgentSessionRecord
    messages: list[SessionMessage]
    last_event_sequence: int
    # The agent's current plan (``update_plan``); absent when it never made one.
    plan: list[PlanEntry] | None = None


class ListSessionsParams(WireModel):
    """``relavium/listSessions``."""

    workspace: str | None = Field(default=None, max_length=4096)
    query: str | None = Field(default=None, max_length=500)
    status: SessionStatus | None = None
    limit: int = Field(default=50, ge=1, le=MAX_PAGE)
    cursor: str | None = Field(default=None, max_length=200)
    # true: the deleted sessions instead (newest deletion first), which restoreSession brings back.
    deleted: bool = False


class ListSessionsResult(WireModel):
    """Result of ``relavium/listSessions``."""

    sessions: list[SessionSummary]
    next_cursor: str | None = None


class GetTranscriptParams(_SessionRef):
    """``relavium/getTranscript``: a page of the transcript, oldest first.

    ``agentSlug`` keeps only the messages that agent wrote (seed 004's per-agent read): its
    answers and tool results, and the tasks and peer messages it sent here.
    """

    before_sequence: int | None = Field(default=None, ge=1)
    limit: int = Field(default=100, ge=1, le=MAX_PAGE)
    agent_slug: str | None = Field(default=None, min_length=1, max_length=200)


class GetTranscriptResult(WireModel):
    """Result of ``relavium/getTranscript`` (oldest first)."""

    messages: list[SessionMessage]
    has_more: bool


class SessionEventsParams(_SessionRef):
    """``relavium/sessionEvents``.

    ``types`` keeps only events of those types (``limit`` counts the kept ones), e.g. the tool
    events a reloaded view needs from the whole log.
    """

    after_sequence: int = Field(ge=0)
    limit: int = Field(default=1000, ge=1, le=10_000)
    types: list[str] | None = Field(default=None, min_length=1, max_length=32)


class SessionEventsResult(WireModel):
    """Result of ``relavium/sessionEvents``: wire envelopes in sequence order."""

    events: list[dict[str, Any]]


SessionChangeKind = Literal["created", "renamed", "deleted", "status"]


class SessionListChange(WireModel):
    """One change to the session list, made by this window or another one."""

    session_id: str
    kind: SessionChangeKind


class SessionsChangedParams(WireModel):
    """``relavium/sessionsChanged`` (server → client): the session list changed.

    Sent to every window on the history (within a fraction of a second of the commit, in
    commit order) when a session is created, renamed, deleted or changes status — also when
    another window did it. Clients re-list (``relavium/listSessions``).
    """

    changes: list[SessionListChange]


class RenameSessionParams(_SessionRef):
    """``relavium/renameSession``."""

    title: str = Field(min_length=1, max_length=500)


class CompactSessionParams(_SessionRef):
    """``relavium/compactSession``."""

    mode: Literal["summarize", "trim"] = "summarize"


class ExportSessionParams(_SessionRef):
    """``relavium/exportSession``."""

    format: ExportFormat = "workflow"
    open: bool = True


class ExportSessionResult(WireModel):
    """Result of ``relavium/exportSession``."""

    format: ExportFormat
    content: str
    suggested_path: str
    opened: bool = False
    # The file the server wrote, if any: in the workspace's .relavium/exports/ when the client
    # could show it, else in relavium's data directory (never in the workspace unasked).
    saved_path: str | None = None
    # What the user was told (window/showMessage) when nothing could be opened.
    message: str | None = None
    # A JSONL export written to disk: its tool cassette, written beside it (seed 004).
    tool_cassette_path: str | None = None


class ForkSessionParams(_SessionRef):
    """``relavium/forkSession``."""

    at_sequence: int = Field(ge=1)


class ForkSessionResult(WireModel):
    """Result of ``relavium/forkSession``."""

    session_id: SessionId


class AgentInfo(WireModel):
    """One entry of ``relavium/listAgents``."""

    id: str
    name: str
    description: str
    model: str | None
    provider: str | None


class ListAgentsResult(WireModel):
    """Result of ``relavium/listAgents``."""

    agents: list[AgentInfo]


class ListToolsParams(WireModel):
    """``relavium/listTools``: the tools a session (or a workspace) can use.

    With ``sessionId`` the session's workspace is used; else ``workingDir``; else the
    workspace the server detects. ``start`` starts trusted MCP servers that are not running
    so their tools can be listed (untrusted project servers are never started).
    """

    session_id: SessionId | None = Field(default=None, min_length=1, max_length=64)
    working_dir: str | None = Field(default=None, min_length=1, max_length=4096)
    start: bool = False


class ToolInfo(WireModel):
    """One tool as the model sees it."""

    name: str
    description: str
    source: Literal["builtin", "mcp"]
    # MCP tools: the server's name and the tool's own name there.
    server: str | None = None
    server_tool: str | None = None
    read_only: bool | None = None


McpServerState = Literal["idle", "starting", "running", "crashed", "failed", "stopped"]


class McpServerInfo(WireModel):
    """One MCP server and its state in this server process."""

    name: str
    origin: Literal["user", "project", "client"]
    transport: Literal["stdio", "http"]
    # The command line or URL (never a header or an environment value).
    target: str
    trusted: bool
    state: McpServerState
    error: str | None = None
    tool_count: int


class ListToolsResult(WireModel):
    """Result of ``relavium/listTools``: built-in tools first, then each server's."""

    tools: list[ToolInfo]
    servers: list[McpServerInfo]


class ListModelsParams(WireModel):
    """``relavium/listModels``: ``refresh`` asks every provider again instead of the cache."""

    refresh: bool = False


class ModelEntry(WireModel):
    """One model a model picker can offer; prices in micro-cents per million tokens."""

    provider_id: str
    model: str
    # What to write as an agent's model (``provider/model``).
    ref: str
    context_window: int | None = None
    input_microcents_per_mtok: int | None = None
    output_microcents_per_mtok: int | None = None
    cache_read_microcents_per_mtok: int | None = None
    cache_write_microcents_per_mtok: int | None = None
    # Reported by the provider's /models endpoint; named by the configuration.
    listed: bool
    configured: bool


class ProviderModelsStatus(WireModel):
    """Whether a provider's model list could be read (``message`` says why not)."""

    provider_id: str
    ok: bool
    listed: int = 0
    message: str | None = None


class ListModelsResult(WireModel):
    """Result of ``relavium/listModels``."""

    models: list[ModelEntry]
    providers: list[ProviderModelsStatus]


class LspPosition(WireModel):
    """An LSP position (0-based line and character)."""

    line: int = Field(ge=0)
    character: int = Field(ge=0)


class LspRange(WireModel):
    """An LSP range."""

    start: LspPosition
    end: LspPosition


class EditorStateParams(WireModel):
    """``relavium/editorState`` notification."""

    uri: str = Field(min_length=1, max_length=8192)
    selection: LspRange | None = None


class SelectionCommandParams(WireModel):
    """Argument of the ``relavium.codeAction.ask`` / ``.explain`` commands (code actions)."""

    uri: str = Field(min_length=1, max_length=8192)
    range: LspRange
    # A client that can prompt may add the user's question (ask only).
    question: str | None = Field(default=None, min_length=1, max_length=MAX_MESSAGE_CHARS)


class SelectionTurnResult(WireModel):
    """Result of the selection commands: the chat used and the turn it began."""

    session_id: SessionId
    turn: SendMessageAccepted


class ExportChatParams(WireModel):
    """The ``relavium.codeAction.export`` command: export the chat of this workspace."""

    uri: str | None = Field(default=None, min_length=1, max_length=8192)
    format: ExportFormat = "workflow"


class ConfigurationSettings(WireModel):
    """``settings.relavium`` of ``workspace/didChangeConfiguration`` (for later sessions)."""

    default_agent: str | None = Field(default=None, min_length=1, max_length=200)
    approval: ApprovalMode | None = None


class RequestApprovalParams(WireModel):
    """``relavium/requestApproval`` (server → client); ``diff`` for a file change."""

    session_id: SessionId
    call_id: str
    tool_id: str
    action: ApprovalAction
    preview: ApprovalPreview
    diff: FileDiff | None = None


ApprovalDecision = Literal["approve", "reject", "approve_always"]


class RequestApprovalResult(WireModel):
    """The client's answer to ``relavium/requestApproval``."""

    decision: ApprovalDecision


class OpenUntitledParams(WireModel):
    """``relavium/openUntitled`` (server → client)."""

    language: str
    content: str
    title: str | None = None


class OpenUntitledResult(WireModel):
    """The client's answer to ``relavium/openUntitled``."""

    opened: bool


class RelaviumClientCapabilities(WireModel):
    """``capabilities.experimental.relavium`` declared by a client."""

    approvals: bool = False
    open_untitled: bool = False
    editor_state: bool = False
    # The editor answers ``relavium/editorQuery`` for these (the matching tools exist then).
    editor_tools: list[EditorFeature] = Field(default_factory=list)


class RelaviumServerCapabilities(WireModel):
    """``capabilities.experimental.relavium`` in the server's ``initialize`` result.

    With ``serverInfo.version`` (the package version) it is what a client checks before using
    the server: see ``relavium_lsp/contracts/versions.py`` for when the number changes.
    """

    protocol_version: int


class InitializationOptions(WireModel):
    """``initializationOptions`` of ``initialize``."""

    client_name: str | None = Field(default=None, max_length=100)
    history_path: str | None = Field(default=None, max_length=4096)
    default_agent: str | None = Field(default=None, max_length=200)
    approval: ApprovalMode | None = None
    allow_disk_writes: bool = False
