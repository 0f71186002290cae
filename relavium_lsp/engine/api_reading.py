"""The engine's front door, part 3: reading sessions, agents, tools and models.

Session lists, transcripts, the workspace's agents, tools and models, and a session's
tool roots; mixed into :class:`~relavium_lsp.engine.api.Engine`.
"""

from __future__ import annotations

from collections.abc import Callable

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.session import AgentSessionRecord, SessionMessage, SessionStatus
from relavium_lsp.contracts.wire import ListToolsResult
from relavium_lsp.engine import exports
from relavium_lsp.engine.api_base import EngineBase
from relavium_lsp.engine.models import with_effective_model
from relavium_lsp.llm.keys import lookup_api_key
from relavium_lsp.llm.model_directory import ModelSources, ModelsReport
from relavium_lsp.mcp.catalog import list_tools
from relavium_lsp.paths import relavium_home
from relavium_lsp.store.sessions import SessionPage
from relavium_lsp.tools.jail import ScopeRoots
from relavium_lsp.tools.registry import default_registry


class Reading(EngineBase):
    """Reading (part of :class:`~relavium_lsp.engine.api.Engine`)."""

    # -- reading ----------------------------------------------------------------------------

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
        §7.1) without anyone resuming them.
        """
        clock = self._live.clock()
        await self._services.store.run(lambda s: s.recover_abandoned(clock))
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
        self, session_id: str, *, before_sequence: int | None = None, limit: int = 100
    ) -> tuple[list[SessionMessage], bool]:
        """A page of the visible transcript, oldest first, and whether older messages exist."""
        await self._live.require_record(session_id)
        return await self._services.store.run(
            lambda s: s.get_transcript(session_id, before_sequence=before_sequence, limit=limit)
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
        """The filesystem roots the session's tool calls are jailed to."""
        session = await self._live.get(session_id)
        context = session.record.context
        return ScopeRoots.build(
            context.working_dir,
            context.fs_scope_tier,
            self._services.temp_dir,
            session.policy.allowed_paths,
            forbidden=(relavium_home(), *self._services.protected_paths),
        )


def key_lookup_for(config: WorkspaceConfig) -> Callable[[str], str | None]:
    """API-key lookup that withholds keys from endpoints a project file chose."""

    def key_for(provider_id: str) -> str | None:
        if provider_id in config.keyless_providers:
            return None
        return lookup_api_key(provider_id)

    return key_for
