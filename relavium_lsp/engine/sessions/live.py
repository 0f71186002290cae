"""The sessions this process serves: creating them, loading them once, recovering crashed turns.

:class:`LiveSessions` maps session ids to live
:class:`~relavium_lsp.engine.sessions.session.AgentSession` objects. A session is loaded from the
store the first time anything needs it (one load per id, however many requests race for it), with
its agent snapshot, the workspace's current configuration and a freshly resolved model chain; a turn
a crash cut short is marked then. Loading never touches a turn another process runs (its lease is
live); a turn whose owner is gone is marked interrupted once, by whichever process looks first. It
is the engine's own bookkeeping — outer layers reach sessions through ``Engine``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from relavium_lsp.config import WorkspaceConfig, WorkspaceConfigs
from relavium_lsp.config.trust import SCOPE_ORDER
from relavium_lsp.contracts.agent import DEFAULT_AGENT, AgentDefinition
from relavium_lsp.contracts.config import ApprovalMode
from relavium_lsp.contracts.events import SessionStarted
from relavium_lsp.contracts.session import (
    AgentSessionRecord,
    FsScopeTier,
    SessionContext,
    SessionSource,
)
from relavium_lsp.engine.collab.delegation import ChildSessions, reload_child, with_child_cap
from relavium_lsp.engine.collab.peers import PeerMessenger
from relavium_lsp.engine.scope import EngineServices
from relavium_lsp.engine.sessions.models import (
    agent_asking_stored_model,
    first_choice,
    stored_choice,
    with_first_model,
)
from relavium_lsp.engine.sessions.session import AgentSession
from relavium_lsp.engine.sessions.state import TurnWatch
from relavium_lsp.errors import InvalidInput, SessionNotFound
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.secret_shapes import Finder, detector_rules, secret_reason
from relavium_lsp.store.models import utc_timestamp
from relavium_lsp.store.rows.learned_window import load_learned_window
from relavium_lsp.store.rows.leases import Lease, LeaseClock, this_host

ChainResolver = Callable[[AgentDefinition, WorkspaceConfig], Sequence[ChainEntry]]
ConfigLoader = Callable[[Path | None], WorkspaceConfig]
# Live sessions kept in memory before idle ones are dropped (reloaded on next use).
MAX_LIVE_SESSIONS = 256


def effective_scope_tier(context: SessionContext, configured: FsScopeTier) -> FsScopeTier:
    """The scope tier a new session gets: the configured one, narrowed by an explicit value.

    A tier the client left unset means "what my configuration says"; one it set explicitly
    may only narrow that (issue 16: an explicit ``sandboxed`` used to read as unset and was
    widened to the project default, and an explicit ``full`` could widen past it).
    """
    if "fs_scope_tier" not in context.model_fields_set:
        return configured
    requested = context.fs_scope_tier
    return min(requested, configured, key=SCOPE_ORDER.index)


class LiveSessions:
    """Creates, loads and holds the live sessions of one engine."""

    def __init__(
        self,
        services: EngineServices,
        *,
        resolve_chain: ChainResolver,
        load_config: ConfigLoader | None = None,
        approval_override: ApprovalMode | None = None,
    ) -> None:
        self._services = services
        self._resolve_chain = resolve_chain
        # Parsed again only when a file changed (config/workspace.py: WorkspaceConfigs).
        self._load_config = load_config or WorkspaceConfigs().load
        # The editor's own setting: the user's choice, so it may loosen a project's.
        self._approval_override = approval_override
        self._live: dict[str, AgentSession] = {}
        self._loading: dict[str, asyncio.Lock] = {}
        # Peer messages between the sessions served here (docs/design.md §2.5).
        self.peers = PeerMessenger(services, self)
        # Told around every turn of every session (set by open_engine; None: nobody).
        self.turn_watch: TurnWatch | None = None
        # The secret detector's rules, loaded on a worker thread once a session is served.
        self.detector_warmup: asyncio.Future[tuple[Finder, ...]] | None = None

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
        self._services.bus.unwatch(session_id)

    async def workspace_config(self, working_dir: str | None) -> WorkspaceConfig:
        """The merged configuration for a workspace (files change: parsed again when they did)."""
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
        source: SessionSource,
        description: str | None = None,
        metadata: dict[str, Any] | None = None,
        parent_session_id: str | None = None,
        cost_cap: int | None = None,
        config: WorkspaceConfig | None = None,
        chain: Sequence[ChainEntry] | None = None,
    ) -> AgentSession:
        """Open a new session for an agent, persist its row and announce it.

        A delegated child names its ``parent_session_id`` and may spend at most ``cost_cap``
        (what is left under its parent's cap) before its turn fails. A replay brings its own
        ``config`` and model ``chain`` (its recordings) instead of the workspace's.
        """
        for name, value in (context.variables or {}).items():
            # Every front end (the LSP answers InvalidParams before it gets here).
            reason = secret_reason(value)
            if reason is not None:
                raise InvalidInput(f"context variable {name!r} was refused because {reason}")
        if config is None:
            config = await self.workspace_config(context.working_dir)
        if cost_cap is not None:
            config = with_child_cap(config, cost_cap)
        agent = pick_agent(config, agent_ref)
        if chain is None:
            chain = await self.chain_for(agent, config)
        tier = effective_scope_tier(context, config.policy.fs_scope)
        if tier != context.fs_scope_tier:
            context = context.model_copy(update={"fs_scope_tier": tier})
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
        await self._services.bus.watch(record.id)
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
            self._live[session_id] = self._live.pop(session_id)  # most recently used last
            return live
        lock = self._loading.setdefault(session_id, asyncio.Lock())
        try:
            async with lock:
                live = self._live.get(session_id)
                if live is not None:
                    return live
                await self.require_record(session_id)
                await self.recover(session_id)
                record = await self.require_record(session_id)
                agent = AgentDefinition.model_validate(record.agent_snapshot)
                config = await self.workspace_config(record.context.working_dir)
                config = await reload_child(self._services.store, record, config)
                # The model it was switched to, in this window or another, before a restart.
                asking = await agent_asking_stored_model(
                    self._services.store, session_id, agent, config
                )
                chain = await self.chain_for(asking, config)
                record = record.model_copy(update={"model_id": chain[0].model})
                # Served here: follow what other windows write to it too (docs/design.md §3.1).
                await self._services.bus.watch(session_id)
                session = self._make_live(record, agent, config, chain)
                # A window a provider showed before a restart (§2.3): not refused again.
                model = chain[0].model
                session.learned_context_window = await self._services.store.run(
                    lambda s: load_learned_window(s.connection, session_id, model)
                )
                # What its delegated children spent counts toward its cap (§2.5).
                session.governor.children_microcents = await self._services.store.run(
                    lambda s: s.descendants_cost(session_id)
                )
                # Peer messages queued while it was busy in a process that has gone (§2.5).
                await self.peers.deliver_pending(session_id)
                return session
        finally:
            # Waiters keep their reference; dropping it here means requests naming unknown
            # ids (a client bug or a flood) leave nothing behind.
            if not lock.locked():
                self._loading.pop(session_id, None)

    async def follow_stored_model(self, session: AgentSession) -> None:
        """Ask the model stored with the session (another window may have switched it)."""
        if session.busy:
            return
        config = await self.workspace_config(session.record.context.working_dir)
        store = self._services.store
        choice = await stored_choice(store, session.id, session.agent, config)
        if choice is not None and choice != first_choice(session.chain):
            session.use_chain(await self.chain_for(with_first_model(session.agent, choice), config))

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
        session.scope.delegator = ChildSessions(session, self, self.peers)
        session.turn_watch = self.turn_watch
        self._live[record.id] = session
        self._evict_idle()
        self._warm_secret_detector()
        return session

    def _warm_secret_detector(self) -> None:
        """Load the secret detector's rules off the loop when the first session is served.

        Importing ``detect-secrets`` takes a few tenths of a second (it brings ``requests``):
        left to the first secret check, it lands on the loop at a turn's first file write.
        Not at start-up, so the server's cold start does not pay for it.
        """
        if self.detector_warmup is None:
            self.detector_warmup = asyncio.ensure_future(asyncio.to_thread(detector_rules))

    def _evict_idle(self) -> None:
        """Keep at most :data:`MAX_LIVE_SESSIONS` in memory: drop the least recently used.

        Issue 16: each live session holds ~30 KB, and a client starting sessions in a loop
        grew the server without bound. A dropped session is reloaded from the store the next
        time anything needs it; one with a running turn, a lease or remembered "always
        allow" answers is never dropped.
        """
        excess = len(self._live) - MAX_LIVE_SESSIONS
        for session_id, session in list(self._live.items()):
            if excess <= 0:
                return
            if session.evictable:
                del self._live[session_id]
                self._services.bus.release(session_id)
                excess -= 1

    def clock(self) -> LeaseClock:
        """The facts a lease decision needs now (a private store's engine has no keeper)."""
        leases = self._services.leases
        if leases is not None:
            return leases.clock()
        return LeaseClock(now=time.time(), timeout_s=0.0, host=this_host(), pid=os.getpid())

    async def recover(self, session_id: str) -> Lease | None:
        """Settle a turn a crash cut short; the live lease if another process runs a turn.

        Never writes into a live lease (docs/design.md §7.1): reading a session another
        window is running leaves it alone.
        """
        clock = self.clock()
        return await self._services.store.run(lambda s: s.recover_session(session_id, clock))

    async def running_elsewhere(self, session_id: str) -> Lease | None:
        """The lease another process holds on the session right now, if any."""
        served = self._live.get(session_id)
        if served is not None and served.busy:
            return None
        return await self.recover(session_id)


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
