"""Assembling a ready-to-use engine (store, bus, tools, providers) and tearing it down.

The LSP server, the ACP agent, the CLI and the demo all start from :func:`open_runtime`, so
there is exactly one way the pieces are put together.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.config import ApprovalMode
from relavium_lsp.engine.bus import EventBus
from relavium_lsp.engine.manager import SessionManager
from relavium_lsp.engine.session import EngineServices
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.llm.keys import lookup_api_key
from relavium_lsp.llm.providers import resolve_chain
from relavium_lsp.llm.seam import ToolSpec
from relavium_lsp.mcp.source import McpToolSource, new_mcp_source
from relavium_lsp.paths import history_db_path, relavium_home
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.keys import resolve_db_key
from relavium_lsp.store.media import MediaStore
from relavium_lsp.tools.base import ToolDispatcher
from relavium_lsp.tools.host import EditorHost
from relavium_lsp.tools.registry import default_registry

GIL_SWITCH_INTERVAL_S = 0.001


@dataclass
class EngineRuntime:
    """A session manager plus the resources it was built on (closed together)."""

    manager: SessionManager
    store: AsyncSessionStore
    http: httpx.AsyncClient
    temp_dir: Path
    history_path: Path
    # The MCP servers behind ``mcp:`` tool entries (None when a test supplied its own tools).
    mcp: McpToolSource | None = None

    def builtin_tools(self) -> list[ToolSpec]:
        """Every built-in tool's spec (as a model would see it)."""
        return self.manager.services.tools.specs(default_registry().names)

    async def close(self) -> None:
        """Abort running turns, flush events, then release every resource."""
        try:
            await self.manager.close()
        finally:
            if self.mcp is not None:
                await self.mcp.close()
            await self.http.aclose()
            await self.store.close()
            shutil.rmtree(self.temp_dir, ignore_errors=True)


def key_lookup_for(config: WorkspaceConfig) -> Callable[[str], str | None]:
    """API-key lookup that withholds keys from endpoints a project file chose."""

    def key_for(provider_id: str) -> str | None:
        if provider_id in config.keyless_providers:
            return None
        return lookup_api_key(provider_id)

    return key_for


async def open_runtime(
    host: EditorHost,
    *,
    history_path: str | Path | None = None,
    tools: ToolDispatcher | None = None,
    mcp: McpToolSource | None = None,
    approval_override: ApprovalMode | None = None,
) -> EngineRuntime:
    """Open the encrypted store (creating it and its key on first use) and build the engine.

    ``mcp`` (closed with the runtime) is the MCP tool source inside ``tools``; without
    ``tools`` the default registry is built around a new one.
    """
    # The store works in a worker thread while the loop parses a fast token stream; with
    # CPython's default 5 ms switch interval every hand-back of the GIL to that thread waits
    # a full interval, which showed up as ~5 ms per event-log write (0.4 ms at 1 ms).
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    path = Path(history_path) if history_path is not None else history_db_path()
    # The keychain may block on an unlock prompt: keep it off the event loop.
    key = await asyncio.to_thread(resolve_db_key, relavium_home())
    store = await AsyncSessionStore.open(path, key)
    http = httpx.AsyncClient(follow_redirects=False)
    temp_dir = Path(tempfile.mkdtemp(prefix="relavium-"))

    def chain_for(agent: AgentDefinition, config: WorkspaceConfig) -> Sequence[ChainEntry]:
        return resolve_chain(
            agent,
            config.providers,
            config.default_model,
            client=http,
            key_lookup=key_lookup_for(config),
        )

    if tools is None:
        # ``tools`` callers (ACP, tests) bring their own registry and pass its MCP source.
        mcp = mcp or new_mcp_source()
        tools = default_registry(sources=[mcp])
    services = EngineServices(
        store=store,
        bus=EventBus(store),
        media=MediaStore(path.parent / "media"),
        tools=tools,
        host=host,
        temp_dir=temp_dir,
        protected_paths=(path.parent,),
    )
    manager = SessionManager(services, resolve_chain=chain_for, approval_override=approval_override)
    return EngineRuntime(
        manager=manager, store=store, http=http, temp_dir=temp_dir, history_path=path, mcp=mcp
    )
