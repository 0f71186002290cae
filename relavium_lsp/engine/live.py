"""The sessions this process serves: creating them, loading them once, recovering crashed turns.

:class:`LiveSessions` maps session ids to live :class:`~relavium_lsp.engine.session.AgentSession`
objects. A session is loaded from the store the first time anything needs it (one load per
id, however many requests race for it), with its agent snapshot, the workspace's current
configuration and a freshly resolved model chain; a turn a crash cut short is marked then.
It is the engine's own bookkeeping — outer layers reach sessions through ``Engine``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from relavium_lsp.config import WorkspaceConfig, load_workspace_config
from relavium_lsp.contracts.agent import DEFAULT_AGENT, AgentDefinition
from relavium_lsp.contracts.config import ApprovalMode
from relavium_lsp.contracts.content import TextPart, ToolCallPart
from relavium_lsp.contracts.events import SessionStarted
from relavium_lsp.contracts.session import (
    AgentSessionRecord,
    InterruptionMarker,
    SessionContext,
    SessionMessage,
)
from relavium_lsp.engine.delegation import ChildSessions
from relavium_lsp.engine.scope import EngineServices
from relavium_lsp.engine.session import AgentSession
from relavium_lsp.errors import InvalidInput, SessionNotFound
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.store.models import utc_timestamp

ChainResolver = Callable[[AgentDefinition, WorkspaceConfig], Sequence[ChainEntry]]
ConfigLoader = Callable[[Path | None], WorkspaceConfig]
INTERRUPTED_NOTE = "[The previous turn was interrupted before it finished (the server stopped).]"


class LiveSessions:
    """Creates, loads and holds the live sessions of one engine."""

    def __init__(
        self,
        services: EngineServices,
        *,
        resolve_chain: ChainResolver,
        load_config: ConfigLoader = load_workspace_config,
        approval_override: ApprovalMode | None = None,
    ) -> None:
        self._services = services
        self._resolve_chain = resolve_chain
        self._load_config = load_config
        # The editor's own setting: the user's choice, so it may loosen a project's.
        self._approval_override = approval_override
        self._live: dict[str, AgentSession] = {}
        self._loading: dict[str, asyncio.Lock] = {}

    def __iter__(self) -> Iterator[AgentSession]:
        return iter(list(self._live.values()))

    def set_approval_override(self, mode: ApprovalMode | None) -> None:
        """The editor's approval setting changed: sessions opened from now on use it."""
        self._approval_override = mode

    def served(self, session_id: str) -> AgentSession | None:
        """The live session for an id, if this process serves it (nothing is loaded)."""
        return self._live.get(session_id)

    def forget(self, session_id: str) -> None:
        """Stop serving a session (it was deleted)."""
        self._live.pop(session_id, None)

    async def workspace_config(self, working_dir: str | None) -> WorkspaceConfig:
        """The merged configuration for a workspace (re-read each time: files change)."""
        directory = Path(working_dir) if working_dir else None
        config = await asyncio.to_thread(self._load_config, directory)
        if self._approval_override is None:
            return config
        policy = config.policy.model_copy(update={"approval": self._approval_override})
        return dataclasses.replace(config, policy=policy)

    async def create(
        self,
        *,
        context: SessionContext,
        agent_ref: str | None,
        title: str | None,
        source: str,
        description: str | None = None,
        metadata: dict[str, Any] | None = None,
        parent_session_id: str | None = None,
        cost_cap: int | None = None,
    ) -> AgentSession:
        """Open a new session for an agent, persist its row and announce it.

        A delegated child names its ``parent_session_id`` and may spend at most ``cost_cap``
        (what is left under its parent's cap) before its turn fails.
        """
        config = await self.workspace_config(context.working_dir)
        if cost_cap is not None:
            capped = config.policy.model_copy(
                update={"max_cost_microcents": cost_cap, "on_exceed": "fail"}
            )
            config = dataclasses.replace(config, policy=capped)
        agent = pick_agent(config, agent_ref)
        chain = await self.chain_for(agent, config)
        if context.fs_scope_tier == "sandboxed" and config.policy.fs_scope != "sandboxed":
            context = context.model_copy(update={"fs_scope_tier": config.policy.fs_scope})
        now = utc_timestamp()
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
            description=description,
            description_source=None if description is None else "user",
            metadata=metadata,
            parent_session_id=parent_session_id,
        )
        await self._services.store.run(lambda s: s.create_session(record))
        session = self._make_live(record, agent, config, chain)
        session.scope.emit(
            SessionStarted(agent_ref=agent.id, model=chain[0].model, context=record.context)
        )
        await session.scope.flush_events()
        return session

    async def get(self, session_id: str) -> AgentSession:
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
                record = await self.require_record(session_id)
                agent = AgentDefinition.model_validate(record.agent_snapshot)
                config = await self.workspace_config(record.context.working_dir)
                chain = await self.chain_for(agent, config)
                session = self._make_live(record, agent, config, chain)
                await self._recover_interrupted_turn(session)
                # What its delegated children spent counts toward its cap (§2.5).
                session.governor.children_microcents = await self._services.store.run(
                    lambda s: s.descendants_cost(session_id)
                )
                return session
        finally:
            # Waiters keep their reference; dropping it here means requests naming unknown
            # ids (a client bug or a flood) leave nothing behind.
            if not lock.locked():
                self._loading.pop(session_id, None)

    async def require_record(self, session_id: str) -> AgentSessionRecord:
        """A session's stored row; :class:`SessionNotFound` if there is none."""
        record = await self._services.store.run(lambda s: s.get_session(session_id))
        if record is None:
            raise SessionNotFound(f"no session with id {session_id!r}")
        return record

    async def chain_for(
        self, agent: AgentDefinition, config: WorkspaceConfig
    ) -> Sequence[ChainEntry]:
        """The agent's model chain, ready to call, under a workspace's configuration."""
        # Building providers may resolve a custom endpoint's host name: keep DNS off the loop.
        return await asyncio.to_thread(self._resolve_chain, agent, config)

    def _make_live(
        self,
        record: AgentSessionRecord,
        agent: AgentDefinition,
        config: WorkspaceConfig,
        chain: Sequence[ChainEntry],
    ) -> AgentSession:
        session = AgentSession(
            record, agent=agent, policy=config.policy, chain=chain, services=self._services
        )
        session.scope.delegator = ChildSessions(session, self)
        self._live[record.id] = session
        return session

    async def _recover_interrupted_turn(self, session: AgentSession) -> None:
        """Mark a turn a crash cut short, so history reads as what really happened."""
        store = self._services.store
        last = await store.run(lambda s: s.last_message(session.id))
        if last is not None and not _ends_a_turn(last):
            marker = InterruptionMarker(interrupted_after_sequence=last.sequence_number)
            await store.run(
                lambda s: s.append_message(
                    session.id, "system", [TextPart(text=INTERRUPTED_NOTE)], interruption=marker
                )
            )
        if session.record.status in ("streaming", "awaiting_approval", "awaiting_peer"):
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
