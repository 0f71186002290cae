"""What a session's turn may use: the shared :class:`EngineServices` and one :class:`SessionScope`.

``EngineServices`` is the process-wide machinery (store, event bus, media, tools, the editor
host), built once when the engine opens. ``SessionScope`` is one session's view of it, handed
down to everything a turn runs — the planner, the turn runner, the cost governor, compaction
and, through the tool call context, every tool — instead of separate callbacks and a
back-reference to the session:

- events leave a turn one way, :meth:`SessionScope.emit` (stamped, persisted, delivered by
  the bus in order); :meth:`SessionScope.flush_events` waits until they reached subscribers;
- the user is asked one way, :meth:`SessionScope.ask_user`, for tool approvals and for going
  past the cost cap alike; what they allowed for the session lives in one
  :class:`~relavium_lsp.tools.base.ApprovalMemory`;
- the session's status changes one way, :meth:`SessionScope.set_status`, which the session
  that owns the scope implements (it keeps the row and the database in step).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from relavium_lsp.contracts.events import EventPayload
from relavium_lsp.contracts.session import SessionStatus
from relavium_lsp.contracts.wire import ApprovalDecision
from relavium_lsp.engine.events.bus import EventBus, LogState
from relavium_lsp.engine.memory.workspace import WorkspaceMemories
from relavium_lsp.engine.sessions.leases import LeaseKeeper
from relavium_lsp.engine.waiting import finish_before_cancelling
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.media import MediaStore
from relavium_lsp.store.rows.leases import LeaseClock
from relavium_lsp.store.sessions import SessionStore
from relavium_lsp.tools.base import ApprovalMemory, Delegator, ToolDispatcher
from relavium_lsp.tools.host import ApprovalRequest, EditorHost

StatusSetter = Callable[[SessionStatus], Awaitable[None]]


@dataclass(frozen=True)
class EngineServices:
    """The shared machinery every session uses (built once by ``open_engine``)."""

    store: AsyncSessionStore
    bus: EventBus
    media: MediaStore
    tools: ToolDispatcher
    host: EditorHost
    temp_dir: Path
    # Folders no tool may touch (the history database's, when it is not the default).
    protected_paths: tuple[Path, ...] = ()
    # Turn leases shared with other processes on the same database (None: a private store,
    # as in a replay's throw-away engine, needs none).
    leases: LeaseKeeper | None = None
    # The workspaces' long-term memories (§2.6; None: a throw-away engine has none).
    memory: WorkspaceMemories | None = None


class SessionScope:
    """One session's handle on the engine: ids, store, media, tools, host, events, status."""

    def __init__(
        self,
        services: EngineServices,
        session_id: str,
        *,
        approval_timeout_s: float,
        set_status: StatusSetter,
    ) -> None:
        self.session_id = session_id
        self.store = services.store
        self.media = services.media
        self.tools = services.tools
        self.host = services.host
        self.temp_dir = services.temp_dir
        self.protected_paths = services.protected_paths
        self.leases = services.leases
        self.memory = services.memory
        self.approvals = ApprovalMemory()
        self._bus = services.bus
        self._approval_timeout_s = approval_timeout_s
        self._set_status = set_status
        # Runs the ``delegate`` tool's child sessions (set by the engine, §2.5).
        self.delegator: Delegator | None = None

    def emit(self, payload: EventPayload) -> None:
        """Emit an event of this session (never blocks; the bus stamps and persists it)."""
        self._bus.emit(self.session_id, payload)

    async def flush_events(self) -> None:
        """Wait until every event emitted so far is persisted and delivered."""
        await self._bus.drain(self.session_id)

    # -- the session's lease and its event numbering (docs/design.md §3.1, §7.1) -----------

    def numbering_position(self) -> int | None:
        """Read with the lease's commit for :meth:`own_events` (``event_log_state``)."""
        return self._bus.claim_position(self.session_id)

    def own_events(self, token: str, state: LogState | None = None) -> None:
        """The lease under ``token`` was just taken: number this session's events here.

        ``state``: ``event_log_state(session, numbering_position(), 0, token)`` read right after
        the lease's commit on the store's thread, so numbering can start at once.
        """
        self._bus.claim(self.session_id, token, state)

    async def disown_events(self) -> None:
        """Before the lease is released: write every event numbered here."""
        await finish_before_cancelling(self._bus.disown(self.session_id))

    def events_handed_out(self) -> int:
        """The highest event number numbered here (what a release must not give again)."""
        return self._bus.handed_out(self.session_id)

    def events_released(self) -> None:
        """After the lease was released: what waits in the inbox is numbered by the log."""
        self._bus.fold_inbox(self.session_id)

    async def hold_lease(self, token: str, clock: LeaseClock) -> None:
        """Take the session's lease (work other than a turn) and own its event numbering."""
        after = self.numbering_position()
        session_id = self.session_id

        def take(store: SessionStore) -> LogState:
            store.acquire_lease(session_id, token, clock)
            return store.event_log_state(session_id, after, 0, token)

        self.own_events(token, await self.store.run(take))

    async def give_back_lease(self, token: str) -> bool:
        """Write what was numbered here, release the lease, then fold the inbox."""
        await self.disown_events()
        handed_out = self.events_handed_out()
        released = await finish_before_cancelling(
            self.store.run(lambda s: s.release_lease(self.session_id, token, handed_out))
        )
        self.events_released()
        return released

    async def set_status(self, status: SessionStatus) -> None:
        """Change the session's status (its row in memory and in the database)."""
        await self._set_status(status)

    async def ask_user(self, request: ApprovalRequest) -> ApprovalDecision:
        """Put one question to the user: a tool call's side effect, or spending past the cap.

        Emits ``agent:approval_requested``, waits until every event so far has reached the
        editor (so it shows why before it asks), marks the session ``awaiting_approval`` while
        the user decides and waits at most the policy's ``approval_timeout_s``. Raises
        ``TimeoutError`` when nobody answered in time; a failing host's error propagates (the
        caller decides what that means — the tool gate refuses the call); cancellation (an
        aborted turn) propagates too.
        """
        self.emit(request.event())
        await self.flush_events()
        await self.set_status("awaiting_approval")
        try:
            return await asyncio.wait_for(
                self.host.request_approval(request), self._approval_timeout_s
            )
        finally:
            await self.set_status("streaming")
