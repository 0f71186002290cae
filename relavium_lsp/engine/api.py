"""The engine's front door: :func:`open_engine` and the :class:`Engine` it returns.

Every outer layer — the LSP server, the ACP agent, the CLI — opens the engine with
:func:`open_engine` and talks to sessions only through :class:`Engine` and the types this
module exports. Nothing outside ``relavium_lsp.engine`` imports another engine module (a test
in ``tests/unit/test_architecture.py`` checks it), so the store, the event bus and the live
session objects stay the engine's own.

Sessions are named by id in every call; what the engine hands out are frozen values
(:class:`SessionSnapshot`, :class:`AgentSessionRecord`, :class:`TurnResult`, …), never the live
objects. Events reach the outside through :meth:`Engine.subscribe`.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.config import ApprovalMode
from relavium_lsp.contracts.content import ContentPart, ToolResultPart
from relavium_lsp.contracts.events import (
    CheckpointReason,
    CompactionReason,
    SessionCheckpoint,
    SessionCompacted,
    SessionStarted,
    SessionTrimmed,
    StampedEvent,
    TokenUsage,
    TurnResult,
)
from relavium_lsp.contracts.peers import HandoffAuditRecord, PeerMessage, PeerMode
from relavium_lsp.contracts.plan import PlanEntry
from relavium_lsp.contracts.replay import ReplayAuditRecord, ReplayReport, ToolReplayMode
from relavium_lsp.contracts.review import (
    CheckpointContentResult,
    ReviewChangesResult,
    ReviewDecision,
    TurnChangesResult,
)
from relavium_lsp.contracts.rewind import RewindResult, TurnCheckpoint
from relavium_lsp.contracts.session import (
    AgentSessionRecord,
    HandoffRecord,
    SessionContext,
    SessionMessage,
    SessionSource,
    SessionStatus,
    check_metadata,
)
from relavium_lsp.contracts.session_ops import ArtifactInfo, HandoffDirection
from relavium_lsp.contracts.wire import ListToolsResult, SessionListChange
from relavium_lsp.engine.events.bus import EventBus, Listener, Unsubscribe
from relavium_lsp.engine.events.watch import ListListener, SharedLogWatcher, interval_from_env
from relavium_lsp.engine.history import exports, turn_review
from relavium_lsp.engine.history.replay import Replays, ReplayStarted
from relavium_lsp.engine.history.rewind import list_turn_checkpoints
from relavium_lsp.engine.history.rewind import rewind as rewind_session
from relavium_lsp.engine.history.rewind import undo_rewind as undo_session_rewind
from relavium_lsp.engine.memory import introspection
from relavium_lsp.engine.memory.introspection_triggers import IntrospectionTriggers
from relavium_lsp.engine.memory.workspace import MemoryListener, WorkspaceMemories
from relavium_lsp.engine.model_setup import provider_presets, setup_model
from relavium_lsp.engine.scope import EngineServices
from relavium_lsp.engine.sessions import admin as session_admin
from relavium_lsp.engine.sessions.admin import KEEP, Keep
from relavium_lsp.engine.sessions.inactive import InactivePolicy
from relavium_lsp.engine.sessions.leases import LeaseKeeper, LeaseSettings
from relavium_lsp.engine.sessions.live import ChainResolver, ConfigLoader, LiveSessions
from relavium_lsp.engine.sessions.models import (
    ModelChoice,
    first_choice,
    model_choices,
    remember_choice,
    with_effective_model,
    with_first_model,
)
from relavium_lsp.engine.sessions.state import SessionSnapshot
from relavium_lsp.engine.sessions.user_edit import apply_user_edit, new_call_id
from relavium_lsp.engine.turn.compaction import CompactionMode
from relavium_lsp.engine.waiting import Timers
from relavium_lsp.errors import (
    BroadWorkingDir,
    DatabaseCorrupted,
    InvalidInput,
    SessionBusy,
    SessionRunningElsewhere,
)
from relavium_lsp.export.documents import UNTITLED, ExportFormat, ExportOutcome
from relavium_lsp.export.tool_cassette import TOOL_CASSETTE_SUFFIX, ToolCassette
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.llm.keys import key_lookup_for
from relavium_lsp.llm.model_directory import ModelDirectory, ModelSources, ModelsReport
from relavium_lsp.llm.providers import resolve_chain
from relavium_lsp.mcp.catalog import list_tools
from relavium_lsp.mcp.source import McpToolSource, new_mcp_source
from relavium_lsp.paths import history_db_path, relavium_home
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.db.keys import DbKey, resolve_db_key
from relavium_lsp.store.media import MediaStore
from relavium_lsp.store.rows import handoffs, peer_messages, replays
from relavium_lsp.store.rows.event_reads import list_checkpoints
from relavium_lsp.store.rows.file_checkpoints import delete_session_checkpoints
from relavium_lsp.store.rows.session_ops import PurgeReport
from relavium_lsp.store.sessions import SessionPage
from relavium_lsp.tools.base import ToolDispatcher, close_tools
from relavium_lsp.tools.host import EditorHost
from relavium_lsp.tools.jail import ScopeRoots, broad_root_reason
from relavium_lsp.tools.registry import default_registry

__all__ = [
    "KEEP",
    "TOOL_CASSETTE_SUFFIX",
    "UNTITLED",
    "CompactionMode",
    "Engine",
    "ExportFormat",
    "ExportOutcome",
    "Keep",
    "LeaseSettings",
    "ListListener",
    "Listener",
    "MemoryListener",
    "ModelChoice",
    "ReplayReport",
    "ReplayStarted",
    "ResumeResult",
    "SessionListChange",
    "SessionSnapshot",
    "Timers",
    "TurnResult",
    "Unsubscribe",
    "WorkspaceMemories",
    "first_choice",
    "key_lookup_for",
    "open_engine",
    "provider_presets",
    "setup_model",
]

GIL_SWITCH_INTERVAL_S = 0.001

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResumeResult:
    """A resumed session: its row, the history tail within budget, the newest event."""

    session: AgentSessionRecord
    messages: list[SessionMessage]
    last_event_sequence: int
    plan: list[PlanEntry] | None = None


class Engine:
    """Sessions, turns, events, history and export for one process; see the module doc.

    One object put together from the engine's parts (services, live sessions, the shared-log
    watcher, the introspection triggers), its methods grouped by job below.
    """

    def __init__(
        self,
        services: EngineServices,
        sessions: LiveSessions,
        *,
        http: httpx.AsyncClient,
        mcp: McpToolSource | None = None,
        triggers: IntrospectionTriggers | None = None,
        inactive: InactivePolicy | None = None,
    ) -> None:
        self._services = services
        # When an untouched session is listed as inactive (engine/sessions/inactive.py).
        self._inactive = inactive or InactivePolicy.from_env()
        self._live = sessions
        # Automatic introspection passes (None: only the manual request, e.g. the CLI).
        self._triggers = triggers
        self._http = http
        self._models = ModelDirectory(http)
        self._watcher = SharedLogWatcher(services.store, services.bus, interval_from_env())
        self._replays = Replays(services, sessions)
        # The MCP servers behind ``mcp:`` tool entries (ACP binds its clients' servers here).
        self.mcp = mcp
        # The workspaces' long-term memories (§2.6): read, write, watch.
        self.memory = services.memory or WorkspaceMemories(services.store)
        self._watcher.on_other_commits(self.memory.poll)

    async def record(self, session_id: str) -> AgentSessionRecord:
        """A session's row (the served copy while this process runs its turn; nothing is loaded).

        Otherwise the stored row: another window may have run turns meanwhile.
        """
        served = self._live.served(session_id)
        if served is not None and served.busy:
            return served.record
        record = await self._live.require_record(session_id)
        if served is None:
            return record
        served.refresh(record)
        return served.record

    async def plan(self, session_id: str) -> list[PlanEntry] | None:
        """The agent's current plan (``update_plan``), or ``None`` when it has none."""
        await self._live.require_record(session_id)
        return await exports.current_plan(self._services, session_id)

    async def _refuse_if_running_elsewhere(self, session_id: str, doing: str) -> None:
        lease = await self._live.running_elsewhere(session_id)
        if lease is not None:
            raise SessionRunningElsewhere(
                f"session {session_id} is running a turn in another window (process "
                f"{lease.owner_pid}); {doing} it when that turn has finished, or abort it"
            )

    def _refuse_busy(self, session_id: str) -> None:
        served = self._live.served(session_id)
        if served is not None and served.busy:
            raise SessionBusy(f"session {session_id} is running a turn; abort it first")

    # -- sessions: start, resume, send, abort, compact, models, applied code ---------------

    async def start(
        self,
        *,
        context: SessionContext,
        agent_ref: str | None = None,
        title: str | None = None,
        source: SessionSource | None = None,
        description: str | None = None,
        metadata: dict[str, Any] | None = None,
        allow_broad_working_dir: bool = False,
    ) -> SessionSnapshot:
        """Open a new session for an agent (``session:started``).

        A working directory at ``/`` or the home directory is refused unless
        ``allow_broad_working_dir`` says the user chose it (the jail's root would be
        everything).
        """
        broad = broad_root_reason(context.working_dir)
        if broad is not None and not allow_broad_working_dir:
            raise BroadWorkingDir(
                f"workingDir {context.working_dir!r} is {broad}: the session's sandbox would "
                "hold every file under it. Open a project folder instead, or pass "
                "allowBroadWorkingDir: true if the user chose this directory",
                working_dir=context.working_dir,
                reason=broad,
            )
        session = await self._live.create(
            context=context,
            agent_ref=agent_ref,
            title=title,
            source=source or SessionSource(kind="cli"),
            description=description,
            metadata=metadata,
        )
        if self._triggers is not None:
            self._triggers.session_started(session.id, session.record.context.working_dir)
        return session.snapshot()

    async def session(self, session_id: str) -> SessionSnapshot:
        """A session as it is now, loaded (and a crashed turn recovered) if not served yet."""
        return (await self._live.get(session_id)).snapshot()

    async def resume(self, session_id: str) -> ResumeResult:
        """Reload a session (ended and inactive ones become idle again) with its history tail.

        A session another window is running is only read: its turn goes on untouched there,
        and this process follows it through the shared event log (docs/design.md §7.1).
        """
        snapshot = await self._reopen(session_id)
        budget = snapshot.context_window
        messages = await self._services.store.run(
            lambda s: s.load_tail_within_budget(session_id, budget)
        )
        try:
            last_event = await self._services.bus.last_sequence(session_id)
            plan = await self.plan(session_id)  # kept in the event log too
        except DatabaseCorrupted as error:
            # The messages are the transcript; a damaged event log must not lock a session
            # out (issue 16). Replays start from nothing; the log line names the file.
            logger.warning("resuming %s without its event log: %s", session_id, error.message)
            last_event, plan = 0, None
        return ResumeResult(
            session=snapshot.record,
            messages=messages,
            last_event_sequence=last_event,
            plan=plan,
        )

    async def reopen(
        self, session_id: str, *, metadata: dict[str, Any] | None = None
    ) -> SessionSnapshot:
        """Get-or-create's "get" (seed 003): reopen a session as :meth:`resume` does.

        It keeps its original source; ``metadata`` is merged into its own, key by key (seed
        002), within the 16 KiB cap.
        """
        snapshot = await self._reopen(session_id)
        if not metadata:
            return snapshot
        merged = {**(snapshot.record.metadata or {}), **metadata}
        try:
            check_metadata(merged)
        except ValueError as error:
            raise InvalidInput(f"the merged {error}") from None
        await self.update_details(session_id, metadata=merged)
        return await self.session(session_id)

    async def _reopen(self, session_id: str) -> SessionSnapshot:
        """Load a session for a client that opens it again, and say so (``session:started``).

        An ended or inactive session becomes idle. One another window is running is only
        read (docs/design.md §7.1).
        """
        session = await self._live.get(session_id)
        session.workspace_memory = None  # a resumed session is given the current memory
        elsewhere = await self._live.running_elsewhere(session_id)
        if elsewhere is None:
            await self._live.follow_stored_model(session)  # switched in another window?
        session.refresh(await self._live.require_record(session_id))
        if elsewhere is not None:
            return session.snapshot()
        if session.record.status in ("ended", "inactive"):
            await session.set_status("idle")
        snapshot = session.snapshot()
        session.scope.emit(
            SessionStarted(
                agent_ref=snapshot.agent.id,
                model=snapshot.model,
                context=snapshot.record.context,
                resumed=True,
            )
        )
        return snapshot

    async def send(
        self, session_id: str, text: str, attachments: Sequence[ContentPart] = ()
    ) -> TurnResult:
        """Append the user's message and run one turn; returns when the turn settles.

        The answer streams as events meanwhile. Cancelling the caller aborts the turn.
        """
        session = await self._live.get(session_id)
        if self._triggers is not None and not await self._triggers.first_turn(session_id):
            # Aborted while it waited for the earlier sessions' passes: nothing was stored.
            return TurnResult(stop_reason="aborted", tokens_used=TokenUsage())
        return await session.send_message(text, attachments)

    async def abort(self, session_id: str) -> bool:
        """Abort the running turn of a session; ``False`` when none was running.

        A turn another process runs is asked to stop through the database (its heartbeat
        sees the request within one beat); this waits until it has let go of its lease.
        """
        served = self._live.served(session_id)
        if served is not None and served.busy:
            return await served.abort()
        if self._triggers is not None and self._triggers.abort_waiting(session_id):
            return True  # a new session's first turn, still waiting to begin
        await self._live.require_record(session_id)
        lease = await self._services.store.run(lambda s: s.request_abort(session_id))
        if lease is None:
            return False
        await self._wait_for_release(session_id, lease.owner_token)
        return True

    async def _wait_for_release(self, session_id: str, token: str) -> None:
        keeper = self._services.leases
        settings = keeper.settings if keeper is not None else LeaseSettings()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + settings.timeout_s + 2 * settings.heartbeat_s
        while loop.time() < deadline:
            lease = await self._live.recover(session_id)
            if lease is None or lease.owner_token != token:
                return
            # Polling the owner's lease row is the only channel between the processes.
            await asyncio.sleep(settings.heartbeat_s / 4)

    def is_running(self, session_id: str) -> bool:
        """Whether this process is running a turn of the session right now."""
        served = self._live.served(session_id)
        return served is not None and served.busy

    def running_turn_sequence(self, session_id: str) -> int | None:
        """The user message sequence of the turn this process runs in the session, if any.

        Another window's turn of the same session never matches (docs/design.md §7.1).
        """
        served = self._live.served(session_id)
        return served.turn_user_sequence if served is not None and served.busy else None

    async def cancel(self, session_id: str) -> None:
        """End a session (``session:cancelled``); it stays resumable by id."""
        session = await self._live.get(session_id)
        if not session.busy:
            await self._refuse_if_running_elsewhere(session_id, "end")
        await session.cancel()

    async def compact(
        self, session_id: str, *, mode: CompactionMode, reason: CompactionReason = "manual"
    ) -> SessionCompacted | SessionTrimmed:
        """Compact a session's visible history now; returns the terminal event."""
        if self._triggers is not None:
            await self._triggers.make_way(session_id)
        return await (await self._live.get(session_id)).compact(mode=mode, reason=reason)

    async def model_choices(self, session_id: str) -> list[ModelChoice]:
        """The models the session may ask first (see :mod:`relavium_lsp.engine.sessions.models`)."""
        session = await self._live.get(session_id)
        config = await self._live.workspace_config(session.record.context.working_dir)
        return model_choices(session.agent, config)

    async def set_model(self, session_id: str, choice_id: str) -> SessionSnapshot:
        """Ask ``choice_id`` (one of :meth:`model_choices`) first from the next turn on.

        The choice is stored with the session: a restarted server, or another window that
        opens the session, asks it too (:mod:`relavium_lsp.engine.sessions.models`).
        """
        session = await self._live.get(session_id)
        if session.busy:
            raise SessionBusy(f"session {session_id} is running a turn; abort it first")
        config = await self._live.workspace_config(session.record.context.working_dir)
        choices = model_choices(session.agent, config)
        choice = next((choice for choice in choices if choice.id == choice_id), None)
        if choice is None:
            known = ", ".join(choice.id for choice in choices)
            raise InvalidInput(f"unknown model {choice_id[:200]!r} (known: {known})")
        chain = await self._live.chain_for(with_first_model(session.agent, choice), config)
        await remember_choice(self._services.store, session_id, choice)
        session.use_chain(chain)
        return session.snapshot()

    async def current_model(self, session_id: str) -> ModelChoice:
        """The model the session asks first now (after any :meth:`set_model`)."""
        return first_choice((await self._live.get(session_id)).chain)

    async def apply_code(self, session_id: str, path: str, content: str) -> ToolResultPart:
        """Write a code block the user applies, as the agent's ``write_file`` would.

        Same jail, approval and undoable editor edit as a turn's write (see
        :mod:`relavium_lsp.engine.sessions.user_edit`); the answer is the tool's result.
        """
        session = await self._live.get(session_id)
        if not session.busy:
            await self._refuse_if_running_elsewhere(session_id, "apply code to")
        return await apply_user_edit(session, path, content, new_call_id())

    def set_approval_override(self, mode: ApprovalMode | None) -> None:
        """The editor's own approval setting changed (``None``: the configuration's rules).

        Sessions opened (or loaded) from now on use it; running ones keep the policy they have.
        """
        self._live.set_approval_override(mode)

    # -- history: names, notes, restore and purge, introspection, fork (docs/design.md §2.5)

    async def rename(self, session_id: str, title: str) -> None:
        """Set a session's title."""
        await self._live.require_record(session_id)
        await self._services.store.run(lambda s: s.rename_session(session_id, title))
        served = self._live.served(session_id)
        if served is not None:
            served.record = served.record.model_copy(update={"title": title})

    async def update_details(
        self,
        session_id: str,
        *,
        description: str | Keep | None = KEEP,
        metadata: dict[str, Any] | Keep | None = KEEP,
    ) -> AgentSessionRecord:
        """Set a session's description (written by the user) and/or metadata."""
        return await session_admin.update_details(
            self._services, self._live, session_id, description=description, metadata=metadata
        )

    async def append_note(
        self, session_id: str, role: Literal["user", "system"], text: str
    ) -> SessionMessage:
        """Add a user or system note to the transcript without calling the model."""
        note = await session_admin.append_note(self._services, self._live, session_id, role, text)
        if self._triggers is not None:
            self._triggers.activity(session_id)
        return note

    async def restore(self, session_id: str) -> AgentSessionRecord:
        """Undo a soft delete."""
        return await session_admin.restore(self._services, session_id)

    async def purge(self, session_id: str) -> PurgeReport:
        """Erase a session and its delegated children for good (rows, index, media)."""
        if self._triggers is not None:
            await self._triggers.forget(session_id)
        return await session_admin.purge(self._services, self._live, session_id)

    async def list_artifacts(self, session_id: str) -> list[ArtifactInfo]:
        """A session's stored full tool outputs, oldest first."""
        return await session_admin.list_artifacts(self._services, self._live, session_id)

    async def list_handoffs(
        self,
        session_id: str,
        *,
        agent: str | None = None,
        direction: HandoffDirection = "both",
    ) -> list[HandoffRecord]:
        """The delegations a session made (to child sessions), oldest first.

        With ``agent``: only those handing control to it (``incoming``), from it
        (``outgoing``) or either (``both``).
        """
        await self._live.require_record(session_id)
        found = await self._services.store.run(lambda s: s.list_handoffs(session_id))
        if agent is None:
            return found
        incoming = direction in ("incoming", "both")
        outgoing = direction in ("outgoing", "both")
        return [
            handoff
            for handoff in found
            if (incoming and handoff.to_agent == agent)
            or (outgoing and handoff.from_agent == agent)
        ]

    async def checkpoint(
        self, session_id: str, reason: CheckpointReason = "manual"
    ) -> SessionCheckpoint:
        """Run an introspection pass (one model call) and record the checkpoint."""
        if self._triggers is not None:
            await self._triggers.make_way(session_id)
        return await introspection.checkpoint(await self._live.get(session_id), reason)

    async def list_introspections(self, session_id: str) -> list[SessionCheckpoint]:
        """A session's introspection checkpoints, oldest first."""
        await self._live.require_record(session_id)
        return await self._services.store.run(lambda s: list_checkpoints(s.connection, session_id))

    async def delete(self, session_id: str) -> None:
        """Soft-delete a session (refused while a turn runs)."""
        served = self._live.served(session_id)
        if served is not None and served.busy:
            raise SessionBusy(f"session {session_id} is running a turn; abort it first")
        await self._live.require_record(session_id)
        if self._triggers is not None:
            await self._triggers.forget(session_id)
        clock = self._live.clock()
        await self._services.store.run(lambda s: s.soft_delete_session(session_id, clock=clock))
        # A deleted session's file checkpoints go with it (their blobs unless shared).
        await self._services.store.run(
            lambda s: delete_session_checkpoints(s.connection, session_id)
        )
        self._live.forget(session_id)

    async def fork(self, session_id: str, at_sequence: int) -> str:
        """Branch a session at one of its messages; returns the new session's id."""
        return await exports.fork(self._services, await self.record(session_id), at_sequence)

    # -- checkpoints and rewind (docs/design.md §6.3) ---------------------------------------

    async def list_checkpoints(self, session_id: str) -> list[TurnCheckpoint]:
        """The file checkpoints of a session's turns, oldest first."""
        return await list_turn_checkpoints(self._services.store, await self.record(session_id))

    async def rewind(
        self,
        session_id: str,
        to_sequence: int,
        *,
        files: bool = True,
        conversation: bool = True,
        host: EditorHost | None = None,
        paths: list[str] | None = None,
    ) -> RewindResult:
        """Rewind files and/or the conversation to before a turn (§6.3).

        ``to_sequence`` is the turn's user message; refused while a turn runs; ``host``
        overrides the engine's editor host (ACP restores on disk); ``paths`` limits the files.
        """
        self._refuse_busy(session_id)
        if self._triggers is not None:
            await self._triggers.make_way(session_id)
        record = await self.record(session_id)
        return await rewind_session(
            self._services,
            record,
            to_sequence,
            files=files,
            conversation=conversation,
            host=host or self._services.host,
            roots=await self.tool_roots(session_id),
            paths=paths,
        )

    async def undo_rewind(
        self, session_id: str, rewind_id: str, *, host: EditorHost | None = None
    ) -> RewindResult:
        """Put back what a rewind of this session (or of the session it forked) replaced."""
        self._refuse_busy(session_id)
        record = await self.record(session_id)
        return await undo_session_rewind(
            self._services,
            record,
            rewind_id,
            host=host or self._services.host,
            roots=await self.tool_roots(session_id),
        )

    # -- reviewing a turn's changes (docs/design.md §6.4) ------------------------------------

    async def turn_changes(
        self, session_id: str, user_sequence: int | None = None, *, host: EditorHost | None = None
    ) -> TurnChangesResult:
        """The files a turn changed, with line counts and their review (default: latest turn)."""
        record = await self.record(session_id)
        return await turn_review.turn_changes(
            self._services, record, host or self._services.host, user_sequence
        )

    async def checkpoint_content(
        self, session_id: str, user_sequence: int, path: str
    ) -> CheckpointContentResult:
        """A file's text before the turn of ``user_sequence`` changed it."""
        return await turn_review.checkpoint_content(
            self._services, await self.record(session_id), user_sequence, path
        )

    async def review_changes(
        self,
        session_id: str,
        user_sequence: int,
        decision: ReviewDecision,
        paths: list[str] | None = None,
        *,
        host: EditorHost | None = None,
    ) -> ReviewChangesResult:
        """Keep or undo files a turn changed (undo: refused while a turn runs)."""
        if decision == "undo":
            self._refuse_busy(session_id)
        return await turn_review.review_changes(
            self._services,
            await self.record(session_id),
            host or self._services.host,
            user_sequence,
            decision,
            paths,
            await self.tool_roots(session_id),
        )

    async def import_jsonl(self, text: str, *, tool_cassette: str | None = None) -> str:
        """Create a new session from a ``relavium-session`` transcript; returns its id.

        ``tool_cassette``: the ``relavium-tool-cassette/1.0`` text exported beside it, kept
        for the new session's replays.
        """
        return await exports.import_transcript(self._services, text, tool_cassette)

    # -- reading: lists, transcripts, agents, tools, models, tool roots --------------------

    async def list_sessions(
        self,
        *,
        workspace: str | None = None,
        status: SessionStatus | None = None,
        query: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        deleted: bool = False,
    ) -> SessionPage:
        """Sessions newest first, filtered (``query`` is full-text) and paged.

        ``deleted``: the soft-deleted sessions instead (what :meth:`restore` brings back).
        Turns whose process is gone are settled first, so they list as idle (docs/design.md
        §7.1) without anyone resuming them; then settled sessions nobody touched for the idle
        time are marked ``inactive`` (engine/sessions/inactive.py).
        """
        clock = self._live.clock()
        cutoff = self._inactive.cutoff()
        await self._services.store.run(lambda s: s.recover_abandoned(clock))
        await self._services.store.run(lambda s: s.mark_inactive(cutoff))
        return await self._services.store.run(
            lambda s: s.list_sessions(
                workspace=workspace,
                status=status,
                query=query,
                limit=limit,
                cursor=cursor,
                deleted=deleted,
            )
        )

    async def transcript(
        self,
        session_id: str,
        *,
        before_sequence: int | None = None,
        limit: int = 100,
        agent_slug: str | None = None,
    ) -> tuple[list[SessionMessage], bool]:
        """A page of the visible transcript, oldest first, and whether older messages exist.

        ``agent_slug`` keeps only the messages that agent wrote (seed 004).
        """
        await self._live.require_record(session_id)
        return await self._services.store.run(
            lambda s: s.get_transcript(
                session_id, before_sequence=before_sequence, limit=limit, agent_slug=agent_slug
            )
        )

    async def full_transcript(
        self, session_id: str
    ) -> tuple[AgentSessionRecord, list[SessionMessage]]:
        """A session's row and every visible message, read in one consistent snapshot."""
        return await exports.full_transcript(self._services, session_id)

    async def list_agents(self, working_dir: str | None) -> list[AgentDefinition]:
        """The agents of a workspace (always including the default agent).

        Each names the model and provider it would ask first, also when that comes from the
        workspace's default model rather than the agent's own file.
        """
        config = await self._live.workspace_config(working_dir)
        return [with_effective_model(agent, config) for agent in config.agents.values()]

    async def list_tools(
        self, *, session_id: str | None, working_dir: str | None, start: bool
    ) -> ListToolsResult:
        """Built-in tools, then every MCP server the session (or workspace) may use."""
        if session_id is not None:
            working_dir = (await self.record(session_id)).context.working_dir
        builtins = self._services.tools.specs(default_registry().names)
        return await list_tools(
            builtins, self.mcp, session_id=session_id, working_dir=working_dir, start=start
        )

    async def list_models(self, working_dir: str | None, *, refresh: bool = False) -> ModelsReport:
        """Every model the workspace can use, with the state of each provider's list.

        Each provider's ``/models`` list is cached for a few minutes (``refresh`` asks again);
        the models the configuration names are added even when no list has them.
        """
        config = await self._live.workspace_config(working_dir)
        sources = ModelSources(
            providers=config.providers,
            agents=tuple(config.agents.values()),
            default_model=config.default_model,
            key_lookup=key_lookup_for(config),
            withheld=config.keyless_providers,
        )
        return await self._models.report(sources, refresh=refresh)

    async def tool_roots(self, session_id: str) -> ScopeRoots:
        """The filesystem roots the session's tools — and its rewinds — may write in."""
        session = await self._live.get(session_id)
        context = session.record.context
        return ScopeRoots.build(
            context.working_dir,
            context.fs_scope_tier,
            self._services.temp_dir,
            session.policy.allowed_paths,
            forbidden=(relavium_home(), *self._services.protected_paths),
        )

    # -- events: live, durable backlog, session-list and memory changes (§3.1) -------------

    async def subscribe(
        self,
        listener: Listener,
        *,
        session_id: str | None = None,
        after_sequence: int | None = None,
    ) -> Unsubscribe:
        """Deliver events to ``listener`` from now on, in order; returns an unsubscribe.

        Without ``session_id``: every session's live events. With it: that session's only —
        and with ``after_sequence`` as well, first the durable backlog after that sequence
        number, then live events, each exactly once and without a gap.
        """
        bus = self._services.bus
        # Served sessions' events from other windows arrive through the shared log (§3.1).
        self._watcher.start()
        if session_id is None:
            if after_sequence is not None:
                raise ValueError("after_sequence needs a session_id")
            return bus.subscribe(listener)
        if after_sequence is None:
            after_sequence = await bus.last_sequence(session_id)
        return await bus.follow(session_id, after_sequence, listener)

    async def watch_memory(self, listener: MemoryListener) -> Unsubscribe:
        """Hear of every new workspace memory revision, from any process (§2.6)."""
        unsubscribe = await self.memory.watch(listener)
        self._watcher.start()
        return unsubscribe

    def watch_sessions(self, listener: ListListener) -> Unsubscribe:
        """Call ``listener`` with session-list changes made by any process on this history.

        Creations, renames, deletions and status changes, in commit order, batched per poll
        (``docs/design.md`` §3.1); returns an unsubscribe.
        """
        return self._watcher.on_list_change(listener)

    async def events_after(
        self, session_id: str, after_sequence: int, limit: int = 1000
    ) -> list[StampedEvent]:
        """The durable event backlog after a sequence number."""
        await self._live.require_record(session_id)
        return await self._services.bus.events_after(session_id, after_sequence, limit)

    async def flush_events(self, session_id: str) -> None:
        """Wait until every event emitted so far for the session reached the subscribers."""
        await self._services.bus.drain(session_id)

    # -- export and replay -----------------------------------------------------------------

    async def render_export(self, session_id: str, fmt: ExportFormat = "workflow") -> ExportOutcome:
        """Build an export (workflow scaffold or JSONL) without recording anything."""
        return await exports.render(self._services, session_id, fmt)

    async def announce_export(
        self,
        session_id: str,
        fmt: ExportFormat,
        location: str = UNTITLED,
        *,
        tool_cassette: ToolCassette | None = None,
    ) -> None:
        """Record where an export went (a path or ``untitled``) and emit ``session:exported``.

        ``tool_cassette`` (a JSONL export's ``ExportOutcome.tool_cassette``) is kept in the
        history for later replays.
        """
        await exports.announce(self._services, self._live, session_id, fmt, location, tool_cassette)

    async def note_saved_export(self, path: str, text: str) -> str | None:
        """Record a saved ``*.relavium.yaml`` scaffold as its session's export (if it is one)."""
        return await exports.note_saved_export(self._services, self._live, path, text)

    async def start_replay(
        self, session_id: str, *, mode: ToolReplayMode = "auto", live_tools: Sequence[str] = ()
    ) -> ReplayStarted:
        """Replay a session into a new one, in the background (docs/design.md §9).

        The replay session streams its events like any turn; ``session:replay_completed``
        ends it. ``live_tools``: the tools a ``mixed`` replay runs live. Every replay writes
        one audit row (:meth:`list_replays`); the replayed session is untouched.
        """
        return await self._replays.start(session_id, mode=mode, live_tools=live_tools)

    async def replay(
        self, session_id: str, *, mode: ToolReplayMode = "auto", live_tools: Sequence[str] = ()
    ) -> ReplayReport:
        """Replay a session into a new one and wait for the report (see :meth:`start_replay`)."""
        started = await self.start_replay(session_id, mode=mode, live_tools=live_tools)
        return await started.task

    async def list_replays(self, session_id: str) -> list[ReplayAuditRecord]:
        """The replays of a session (and the one that made it, for a replay), oldest first."""
        await self._live.require_record(session_id)
        return await self._services.store.run(
            lambda s: replays.list_replays(s.connection, session_id)
        )

    # -- peers: sessions working with sessions (docs/design.md §2.5) -----------------------

    async def send_peer_message(
        self, session_id: str, to_session_ids: Sequence[str], text: str, mode: PeerMode
    ) -> PeerMessage:
        """Send a peer message from a session that is not running a turn."""
        sender = await self._live.get(session_id)
        if sender.busy:
            raise SessionBusy(f"session {session_id} is running a turn; send it afterwards")
        return await self._live.peers.send(sender, to_session_ids, text, mode)

    async def list_peer_messages(
        self, session_id: str, direction: Literal["sent", "received", "all"] = "all"
    ) -> list[PeerMessage]:
        """Peer messages a session sent and/or received, with their deliveries."""
        await self._live.require_record(session_id)
        return await self._services.store.run(
            lambda s: peer_messages.list_messages(s.connection, session_id, direction)
        )

    async def list_handoff_audit(self, session_id: str) -> list[HandoffAuditRecord]:
        """Resumes and replays of the handoffs a session made or was started by."""
        await self._live.require_record(session_id)
        return await self._services.store.run(
            lambda s: handoffs.list_audit(s.connection, session_id)
        )

    # -- shutdown ---------------------------------------------------------------------------

    async def close(self) -> None:
        """Abort running turns (persisting them consistently), flush events, release all."""
        await self._watcher.close()
        if self._triggers is not None:
            await self._triggers.close()
        await self._replays.close()
        try:
            await asyncio.gather(*(session.abort() for session in self._live))
            await self._live.peers.close()
            await self._services.bus.drain_all()
        finally:
            await close_tools(self._services.tools)
            if self.mcp is not None:
                await self.mcp.close()
            await self._http.aclose()
            await self._services.store.close()
            shutil.rmtree(self._services.temp_dir, ignore_errors=True)


async def open_engine(
    host: EditorHost,
    *,
    history_path: str | Path | None = None,
    db_key: DbKey | None = None,
    tools: ToolDispatcher | None = None,
    mcp: McpToolSource | None = None,
    approval_override: ApprovalMode | None = None,
    providers: ChainResolver | None = None,
    load_config: ConfigLoader | None = None,
    lease_settings: LeaseSettings | None = None,
    auto_introspection: bool = False,
    timers: Timers | None = None,
    inactive: InactivePolicy | None = None,
) -> Engine:
    """Open the encrypted store (creating it and its key on first use) and build the engine.

    ``host`` is the editor as the engine sees it (LSP, ACP or plain files). The rest have
    production defaults: the history database in ``RELAVIUM_HOME``, its key from the
    keychain / key file / ``RELAVIUM_DB_KEY``, every built-in tool, providers resolved from
    the workspace configuration. Tests and tools replace them (``db_key``, ``providers``,
    ``load_config``), never the way the pieces are put together. ``mcp`` is the MCP tool
    source inside a caller's ``tools`` (closed with the engine); without ``tools`` the
    default registry is built around a new one. ``auto_introspection`` runs the automatic
    introspection passes (editor servers do; ``timers`` replaces the event loop's delays).
    """
    # The store works in a worker thread while the loop parses a fast token stream; with
    # CPython's default 5 ms switch interval every hand-back of the GIL to that thread waits
    # a full interval, which showed up as ~5 ms per event-log write (0.4 ms at 1 ms).
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    path = Path(history_path) if history_path is not None else history_db_path()
    if db_key is None:
        # The keychain may block on an unlock prompt: keep it off the event loop.
        db_key = await asyncio.to_thread(resolve_db_key, relavium_home())
    store = await AsyncSessionStore.open(path, db_key)
    http = httpx.AsyncClient(follow_redirects=False)
    temp_dir = Path(tempfile.mkdtemp(prefix="relavium-"))

    def chain_for(agent: AgentDefinition, config: WorkspaceConfig) -> Sequence[ChainEntry]:
        return resolve_chain(
            agent,
            config.providers,
            config.default_model,
            client=http,
            key_lookup=key_lookup_for(config),
            withheld=config.keyless_providers,
        )

    if tools is None:
        mcp = mcp or new_mcp_source()
        tools = default_registry(sources=[mcp])
    leases = LeaseKeeper(store, lease_settings or LeaseSettings.from_env())
    services = EngineServices(
        store=store,
        bus=EventBus(store, lease_clock=leases.clock),
        media=MediaStore(path.parent / "media"),
        tools=tools,
        host=host,
        temp_dir=temp_dir,
        protected_paths=(path.parent,),
        leases=leases,
        memory=WorkspaceMemories(store),
    )
    sessions = LiveSessions(
        services,
        resolve_chain=providers or chain_for,
        load_config=load_config,
        approval_override=approval_override,
    )
    triggers = IntrospectionTriggers(sessions, store, timers=timers) if auto_introspection else None
    sessions.turn_watch = triggers
    return Engine(services, sessions, http=http, mcp=mcp, triggers=triggers, inactive=inactive)
