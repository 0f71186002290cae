"""What every part of the engine's front door shares: its services and a few common checks.

:class:`EngineBase` holds the engine's services, its live sessions, the HTTP client, the
model directory and the shared-log watcher; the mixins of :class:`~relavium_lsp.engine.api.
Engine` (``api_sessions``, ``api_history``, ``api_reading``, ``api_events``, ``api_export``,
``api_peers``) build on it. Outer layers never import this module: they use
:mod:`relavium_lsp.engine.api`.
"""

from __future__ import annotations

import httpx

from relavium_lsp.contracts.plan import PlanEntry
from relavium_lsp.contracts.session import AgentSessionRecord
from relavium_lsp.engine import exports
from relavium_lsp.engine.introspection_triggers import IntrospectionTriggers
from relavium_lsp.engine.live import LiveSessions
from relavium_lsp.engine.scope import EngineServices
from relavium_lsp.engine.watch import SharedLogWatcher, interval_from_env
from relavium_lsp.engine.workspace_memory import WorkspaceMemories
from relavium_lsp.errors import SessionBusy, SessionRunningElsewhere
from relavium_lsp.llm.model_directory import ModelDirectory
from relavium_lsp.mcp.source import McpToolSource
from relavium_lsp.paths import relavium_home
from relavium_lsp.tools.jail import ScopeRoots


class EngineBase:
    """The state and common checks of :class:`~relavium_lsp.engine.api.Engine`."""

    def __init__(
        self,
        services: EngineServices,
        sessions: LiveSessions,
        *,
        http: httpx.AsyncClient,
        mcp: McpToolSource | None = None,
        triggers: IntrospectionTriggers | None = None,
    ) -> None:
        self._services = services
        self._live = sessions
        # Automatic introspection passes (None: only the manual request, e.g. the CLI).
        self._triggers = triggers
        self._http = http
        self._models = ModelDirectory(http)
        self._watcher = SharedLogWatcher(services.store, services.bus, interval_from_env())
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

    async def _session_roots(self, session_id: str) -> ScopeRoots:
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

    def _refuse_busy(self, session_id: str) -> None:
        served = self._live.served(session_id)
        if served is not None and served.busy:
            raise SessionBusy(f"session {session_id} is running a turn; abort it first")
