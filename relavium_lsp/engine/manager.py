"""The SessionManager: the one object a server (or a test) owns to run sessions.

It holds the live :class:`AgentSession` objects of this process, creates and reloads them
from the store, and is the engine API the LSP, ACP and CLI layers call. It never imports an
editor protocol; everything editor-specific arrives through the :class:`EditorHost`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from relavium_lsp.config import WorkspaceConfig, load_workspace_config
from relavium_lsp.contracts.agent import DEFAULT_AGENT, AgentDefinition
from relavium_lsp.contracts.config import ApprovalMode
from relavium_lsp.contracts.content import ContentPart, TextPart, ToolCallPart
from relavium_lsp.contracts.events import (
    CompactionReason,
    SessionCompacted,
    SessionStarted,
    SessionTrimmed,
    StampedEvent,
)
from relavium_lsp.contracts.session import (
    AgentSessionRecord,
    InterruptionMarker,
    SessionContext,
    SessionMessage,
    SessionStatus,
)
from relavium_lsp.engine.compaction import CompactionMode
from relavium_lsp.engine.session import AgentSession, EngineServices
from relavium_lsp.engine.turn import TurnResult
from relavium_lsp.errors import InvalidInput, SessionBusy, SessionNotFound
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.store.sessions import SessionPage

ChainResolver = Callable[[AgentDefinition, WorkspaceConfig], Sequence[ChainEntry]]
ConfigLoader = Callable[[Path | None], WorkspaceConfig]
INTERRUPTED_NOTE = "[The previous turn was interrupted before it finished (the server stopped).]"


def utc_now() -> str:
    """The current time as ISO 8601 UTC with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class ResumeResult:
    """A resumed session: its row, the history tail within budget, the newest event."""

    session: AgentSessionRecord
    messages: list[SessionMessage]
    last_event_sequence: int


class SessionManager:
    """Creates, reloads and drives sessions for one process."""

    def __init__(
        self,
        services: EngineServices,
        *,
        resolve_chain: ChainResolver,
        load_config: ConfigLoader = load_workspace_config,
        approval_override: ApprovalMode | None = None,
    ) -> None:
        self.services = services
        self._resolve_chain = resolve_chain
        self._load_config = load_config
        # The editor's own setting: the user's choice, so it may loosen a project's.
        self._approval_override = approval_override
        self._live: dict[str, AgentSession] = {}
        self._loading: dict[str, asyncio.Lock] = {}

    def set_approval_override(self, mode: ApprovalMode | None) -> None:
        """The editor's approval setting changed: it applies to sessions opened from now on."""
        self._approval_override = mode

    # -- opening sessions ------------------------------------------------------------------

    async def workspace_config(self, working_dir: str | None) -> WorkspaceConfig:
        """The merged configuration for a workspace (re-read each time: files change)."""
        directory = Path(working_dir) if working_dir else None
        config = await asyncio.to_thread(self._load_config, directory)
        if self._approval_override is None:
            return config
        policy = config.policy.model_copy(update={"approval": self._approval_override})
        return dataclasses.replace(config, policy=policy)

    async def _chain(self, agent: AgentDefinition, config: WorkspaceConfig) -> Sequence[ChainEntry]:
        # Building providers may resolve a custom endpoint's host name: keep DNS off the loop.
        return await asyncio.to_thread(self._resolve_chain, agent, config)

    async def start(
        self,
        *,
        context: SessionContext,
        agent_ref: str | None = None,
        title: str | None = None,
        source: str = "cli",
    ) -> AgentSession:
        """Open a new session for an agent and persist its row."""
        config = await self.workspace_config(context.working_dir)
        agent = pick_agent(config, agent_ref)
        chain = await self._chain(agent, config)
        if context.fs_scope_tier == "sandboxed" and config.policy.fs_scope != "sandboxed":
            context = context.model_copy(update={"fs_scope_tier": config.policy.fs_scope})
        now = utc_now()
        record = AgentSessionRecord(
            id=str(uuid.uuid4()),
            agent_slug=agent.id,
            agent_snapshot=agent.model_dump(mode="json"),
            title=title,
            model_id=chain[0].model,
            context=context,
            source=source,
            created_at=now,
            updated_at=now,
        )
        await self.services.store.run(lambda s: s.create_session(record))
        session = self._make_live(record, agent, config, chain)
        session.emit(
            SessionStarted(agent_ref=agent.id, model=session.model, context=record.context)
        )
        await self.services.bus.drain(record.id)
        return session

    async def session(self, session_id: str) -> AgentSession:
        """The live session for an id, loading (and recovering) it from the store if needed."""
        live = self._live.get(session_id)
        if live is not None:
            return live
        lock = self._loading.setdefault(session_id, asyncio.Lock())
        try:
            async with lock:
                live = self._live.get(session_id)
                if live is not None:
                    return live
                record = await self.services.store.run(lambda s: s.get_session(session_id))
                if record is None:
                    raise SessionNotFound(f"no session with id {session_id!r}")
                agent = AgentDefinition.model_validate(record.agent_snapshot)
                config = await self.workspace_config(record.context.working_dir)
                chain = await self._chain(agent, config)
                session = self._make_live(record, agent, config, chain)
                await self._recover_interrupted_turn(session)
                return session
        finally:
            # Waiters keep their reference; dropping it here means requests naming unknown
            # ids (a client bug or a flood) leave nothing behind.
            if not lock.locked():
                self._loading.pop(session_id, None)

    async def resume(self, session_id: str) -> ResumeResult:
        """Reload a session (ended ones become idle again) with its history tail."""
        session = await self.session(session_id)
        if session.record.status == "ended":
            await session.set_status("idle")
        budget = session.context_window()
        messages = await self.services.store.run(
            lambda s: s.load_tail_within_budget(session_id, budget)
        )
        session.emit(
            SessionStarted(
                agent_ref=session.agent.id,
                model=session.model,
                context=session.record.context,
                resumed=True,
            )
        )
        last_event = await self.services.bus.last_sequence(session_id)
        return ResumeResult(
            session=session.record, messages=messages, last_event_sequence=last_event
        )

    # -- driving sessions ------------------------------------------------------------------

    async def send_message(
        self, session_id: str, text: str, attachments: Sequence[ContentPart] = ()
    ) -> TurnResult:
        """Run one turn; see :meth:`AgentSession.send_message`."""
        return await (await self.session(session_id)).send_message(text, attachments)

    async def abort(self, session_id: str) -> bool:
        """Abort the running turn of a session; ``False`` when none was running."""
        live = self._live.get(session_id)
        if live is None:
            await self._require(session_id)
            return False
        return await live.abort()

    async def cancel(self, session_id: str) -> None:
        """End a session (``session:cancelled``)."""
        await (await self.session(session_id)).cancel()

    async def compact(
        self, session_id: str, *, mode: CompactionMode, reason: CompactionReason = "manual"
    ) -> SessionCompacted | SessionTrimmed:
        """Compact a session's visible history now."""
        return await (await self.session(session_id)).compact(mode=mode, reason=reason)

    async def rename(self, session_id: str, title: str) -> None:
        """Set a session's title."""
        await self._require(session_id)
        await self.services.store.run(lambda s: s.rename_session(session_id, title))
        live = self._live.get(session_id)
        if live is not None:
            live.record = live.record.model_copy(update={"title": title})

    async def delete(self, session_id: str) -> None:
        """Soft-delete a session (refused while a turn runs)."""
        live = self._live.get(session_id)
        if live is not None and live.busy:
            raise SessionBusy(f"session {session_id} is running a turn; abort it first")
        await self._require(session_id)
        await self.services.store.run(lambda s: s.soft_delete_session(session_id))
        self._live.pop(session_id, None)

    # -- reading ---------------------------------------------------------------------------

    async def list_sessions(
        self,
        *,
        workspace: str | None = None,
        status: SessionStatus | None = None,
        query: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> SessionPage:
        """Sessions newest first, filtered and paged."""
        return await self.services.store.run(
            lambda s: s.list_sessions(
                workspace=workspace, status=status, query=query, limit=limit, cursor=cursor
            )
        )

    async def transcript(
        self, session_id: str, *, before_sequence: int | None = None, limit: int = 100
    ) -> tuple[list[SessionMessage], bool]:
        """A page of the visible transcript, oldest first."""
        await self._require(session_id)
        return await self.services.store.run(
            lambda s: s.get_transcript(session_id, before_sequence=before_sequence, limit=limit)
        )

    async def events_after(
        self, session_id: str, after_sequence: int, limit: int = 1000
    ) -> list[StampedEvent]:
        """The durable event backlog after a sequence number."""
        await self._require(session_id)
        return await self.services.bus.events_after(session_id, after_sequence, limit)

    async def get_record(self, session_id: str) -> AgentSessionRecord:
        """A session's row (live copy if it is being served)."""
        live = self._live.get(session_id)
        return live.record if live is not None else await self._require(session_id)

    # -- shutdown --------------------------------------------------------------------------

    async def close(self) -> None:
        """Abort running turns (persisting them consistently) and flush every event."""
        await asyncio.gather(*(session.abort() for session in self._live.values()))
        await self.services.bus.drain_all()

    # -- internals -------------------------------------------------------------------------

    def _make_live(
        self,
        record: AgentSessionRecord,
        agent: AgentDefinition,
        config: WorkspaceConfig,
        chain: Sequence[ChainEntry],
    ) -> AgentSession:
        session = AgentSession(
            record, agent=agent, policy=config.policy, chain=chain, services=self.services
        )
        self._live[record.id] = session
        return session

    async def _require(self, session_id: str) -> AgentSessionRecord:
        record = await self.services.store.run(lambda s: s.get_session(session_id))
        if record is None:
            raise SessionNotFound(f"no session with id {session_id!r}")
        return record

    async def _recover_interrupted_turn(self, session: AgentSession) -> None:
        """Mark a turn a crash cut short, so history reads as what really happened."""
        last = await self.services.store.run(lambda s: s.last_message(session.id))
        if last is not None and not _ends_a_turn(last):
            marker = InterruptionMarker(interrupted_after_sequence=last.sequence_number)
            await self.services.store.run(
                lambda s: s.append_message(
                    session.id, "system", [TextPart(text=INTERRUPTED_NOTE)], interruption=marker
                )
            )
        if session.record.status in ("streaming", "awaiting_approval"):
            await session.set_status("idle")


def pick_agent(config: WorkspaceConfig, agent_ref: str | None) -> AgentDefinition:
    """The agent a start request names, else the workspace's only agent, else the default."""
    if agent_ref is not None:
        agent = config.agents.get(agent_ref)
        if agent is None:
            known = ", ".join(sorted(config.agents))
            raise InvalidInput(f"unknown agent {agent_ref!r} (known: {known})")
        return agent
    custom = [agent for agent in config.agents.values() if agent.id != DEFAULT_AGENT.id]
    if len(custom) == 1:
        return custom[0]
    return config.agents.get(DEFAULT_AGENT.id, DEFAULT_AGENT)


def _ends_a_turn(message: SessionMessage) -> bool:
    """Whether history may rest on this message (a final answer or a system marker)."""
    if message.role == "system":
        return True
    if message.role != "assistant":
        return False
    return not any(isinstance(part, ToolCallPart) for part in message.content)
