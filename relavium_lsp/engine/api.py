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
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import httpx

from relavium_lsp.config import WorkspaceConfig, load_workspace_config
from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.config import ApprovalMode
from relavium_lsp.contracts.events import TurnResult
from relavium_lsp.contracts.wire import SessionListChange
from relavium_lsp.engine.api_events import Events
from relavium_lsp.engine.api_export import Exporting
from relavium_lsp.engine.api_history import HistoryManagement
from relavium_lsp.engine.api_peers import Peers
from relavium_lsp.engine.api_reading import Reading, key_lookup_for
from relavium_lsp.engine.api_sessions import ResumeResult, SessionDriving
from relavium_lsp.engine.bus import EventBus, Listener, Unsubscribe
from relavium_lsp.engine.compaction import CompactionMode
from relavium_lsp.engine.introspection_triggers import IntrospectionTriggers
from relavium_lsp.engine.leases import LeaseKeeper, LeaseSettings
from relavium_lsp.engine.live import ChainResolver, ConfigLoader, LiveSessions
from relavium_lsp.engine.model_setup import provider_presets, setup_model
from relavium_lsp.engine.models import ModelChoice, first_choice
from relavium_lsp.engine.scope import EngineServices
from relavium_lsp.engine.session_admin import KEEP, Keep
from relavium_lsp.engine.snapshot import SessionSnapshot
from relavium_lsp.engine.timers import Timers
from relavium_lsp.engine.watch import ListListener
from relavium_lsp.engine.workspace_memory import MemoryListener, WorkspaceMemories
from relavium_lsp.export.documents import UNTITLED, ExportFormat, ExportOutcome
from relavium_lsp.export.replay import ReplayReport
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.llm.providers import resolve_chain
from relavium_lsp.mcp.source import McpToolSource, new_mcp_source
from relavium_lsp.paths import history_db_path, relavium_home
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.keys import DbKey, resolve_db_key
from relavium_lsp.store.media import MediaStore
from relavium_lsp.tools.base import ToolDispatcher, close_tools
from relavium_lsp.tools.host import EditorHost
from relavium_lsp.tools.registry import default_registry

__all__ = [
    "KEEP",
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


class Engine(SessionDriving, HistoryManagement, Reading, Events, Exporting, Peers):
    """Sessions, turns, events, history and export for one process; see the module doc."""

    # -- shutdown ---------------------------------------------------------------------------

    async def close(self) -> None:
        """Abort running turns (persisting them consistently), flush events, release all."""
        await self._watcher.close()
        if self._triggers is not None:
            await self._triggers.close()
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
    load_config: ConfigLoader = load_workspace_config,
    lease_settings: LeaseSettings | None = None,
    auto_introspection: bool = False,
    timers: Timers | None = None,
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
    return Engine(services, sessions, http=http, mcp=mcp, triggers=triggers)
