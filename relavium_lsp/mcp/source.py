"""MCP servers as a tool source of the registry: ``mcp:NAME`` and ``mcp:NAME/TOOL`` entries.

When a turn is planned, :meth:`McpToolSource.resolve` turns the agent's ``mcp:`` entries
into tool definitions, plus every tool of the servers an ACP client passed for the session.
It finds the servers the session may use (the workspace's configuration, re-read each turn,
and the client's), makes sure a project-declared server is trusted — asking the user once per
definition and workspace — starts servers that are not running (:mod:`relavium_lsp.mcp.pool`)
and adapts their tools (:mod:`relavium_lsp.mcp.adapter`).

An untrusted server is never started: if the user declines (or nobody answers) its tools are
simply absent for this session and it is not asked about again until the session is
reloaded. A server that cannot start is left out of the turn with a warning in the log; the
turn goes on with the other tools.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from relavium_lsp.config.mcp_servers import ServerDefinition, enabled
from relavium_lsp.contracts.agent import MCP_SELECTOR_PREFIX, parse_mcp_selector
from relavium_lsp.contracts.events import AgentToolCall, AgentToolResult, ApprovalPreview
from relavium_lsp.contracts.mcp import exposed_name
from relavium_lsp.errors import ConfigError, ToolDenied, ToolError
from relavium_lsp.mcp.adapter import tool_definition
from relavium_lsp.mcp.connection import ListedTool
from relavium_lsp.mcp.pool import ManagedServer, McpServerPool, ServerStatus
from relavium_lsp.mcp.trust import TrustStore
from relavium_lsp.tools.approval import require_approval
from relavium_lsp.tools.base import ApprovalNeed, ToolCallContext, ToolDefinition

ServerLoader = Callable[[Path | None], Mapping[str, ServerDefinition]]
TRUST_SCOPE = "trust"
_log = logging.getLogger(__name__)


def configured_servers(workspace: Path | None) -> Mapping[str, ServerDefinition]:
    """The ``[mcp.servers]`` of the user's and the workspace's config files."""
    from relavium_lsp.config import load_workspace_config

    return load_workspace_config(workspace).mcp_servers


@dataclass(frozen=True)
class ServerReport:
    """One server as ``relavium/listTools`` and ``doctor`` describe it."""

    definition: ServerDefinition
    trusted: bool
    status: ServerStatus
    # (exposed name, listed tool name, description, read-only) of each known tool.
    tools: tuple[tuple[str, str, str, bool], ...]


class McpToolSource:
    """The registry's source of MCP tools (one per relavium process)."""

    def __init__(
        self,
        pool: McpServerPool,
        trust: TrustStore,
        *,
        load_servers: ServerLoader = configured_servers,
    ) -> None:
        self.pool = pool
        self.trust = trust
        self._load_servers = load_servers
        self._client_servers: dict[str, dict[str, ServerDefinition]] = {}
        self._client_dirs: dict[str, str | None] = {}
        self._declined: set[tuple[str, str]] = set()
        self._definitions: weakref.WeakKeyDictionary[
            ManagedServer, tuple[tuple[ListedTool, ...], list[tuple[str, ToolDefinition[Any]]]]
        ] = weakref.WeakKeyDictionary()

    # -- the ToolSource protocol -------------------------------------------------------------

    def claims(self, entry: str) -> bool:
        """``mcp:`` entries are ours."""
        return entry.startswith(MCP_SELECTOR_PREFIX)

    async def resolve(
        self, entries: Sequence[str], ctx: ToolCallContext
    ) -> list[ToolDefinition[Any]]:
        """The tools the entries select for this turn (see the module doc)."""
        wanted = _wanted_tools(entries)
        # An ACP client's servers were handed to this session: all of their tools are offered.
        wanted.update(dict.fromkeys(self._client_servers.get(ctx.session_id, {})))
        if not wanted:
            return []
        working_dir = ctx.context.working_dir
        available = await self.servers(ctx.session_id, working_dir)
        definitions: list[ToolDefinition[Any]] = []
        for server_name, only in wanted.items():
            server = available.get(server_name)
            if server is None:
                _log.warning(
                    "the agent selects MCP server %r, which is not configured", server_name
                )
                continue
            if not await self._may_start(server, ctx):
                continue
            try:
                managed = self.pool.server(server, working_dir)
                tools = await managed.tools()
            except ToolError as error:
                _log.warning(
                    "MCP server %r is left out of this turn: %s", server_name, error.message
                )
                continue
            definitions.extend(
                definition
                for name, definition in self._adapted(managed, tools)
                if only is None or name in only
            )
        return definitions

    def _adapted(
        self, managed: ManagedServer, tools: tuple[ListedTool, ...]
    ) -> list[tuple[str, ToolDefinition[Any]]]:
        """The server's tools as definitions, built once per listing (schemas compile once)."""
        cached = self._definitions.get(managed)
        if cached is not None and cached[0] is tools:
            return cached[1]
        adapted = [
            (tool.name, definition)
            for tool in tools
            if (definition := tool_definition(managed, tool)) is not None
        ]
        self._definitions[managed] = (tools, adapted)
        return adapted

    # -- which servers a session may use ------------------------------------------------------

    async def servers(
        self, session_id: str | None, working_dir: str | None
    ) -> dict[str, ServerDefinition]:
        """Configured servers of the workspace plus the session's client servers (enabled)."""
        try:
            configured = await asyncio.to_thread(
                self._load_servers, Path(working_dir) if working_dir else None
            )
        except ConfigError as error:
            _log.warning("MCP servers of %s are unavailable: %s", working_dir, error.message)
            configured = {}
        servers = enabled(configured)
        if session_id is not None:
            servers.update(self._client_servers.get(session_id, {}))
        return servers

    def bind_session(
        self, session_id: str, servers: Sequence[ServerDefinition], working_dir: str | None
    ) -> None:
        """Servers an ACP client passed for one session (they replace earlier ones)."""
        self._client_servers[session_id] = {server.name: server for server in servers}
        self._client_dirs[session_id] = working_dir

    async def release_session(self, session_id: str) -> None:
        """The session closed: stop its client servers no other session uses."""
        servers = self._client_servers.pop(session_id, {})
        working_dir = self._client_dirs.pop(session_id, None)
        self._declined = {entry for entry in self._declined if entry[0] != session_id}
        still_used = {
            server.pool_key(self._client_dirs[other])
            for other, bound in self._client_servers.items()
            for server in bound.values()
        }
        unused = [s for s in servers.values() if s.pool_key(working_dir) not in still_used]
        await self.pool.release(unused, working_dir)

    async def close(self) -> None:
        """Stop every server."""
        await self.pool.close()

    # -- trust --------------------------------------------------------------------------------

    async def _may_start(self, server: ServerDefinition, ctx: ToolCallContext) -> bool:
        if await self.trust.is_trusted_async(server):
            return True
        declined = (ctx.session_id, server.fingerprint())
        if declined in self._declined:
            return False
        try:
            await ask_trust(ctx, server)
        except ToolDenied as denied:
            _log.info("MCP server %r not trusted: %s", server.name, denied.message)
            self._declined.add(declined)
            return False
        await self.trust.trust_async(server)
        return True

    # -- describing -----------------------------------------------------------------------------

    async def report(
        self, session_id: str | None, working_dir: str | None, *, start: bool
    ) -> list[ServerReport]:
        """Every server the session (or workspace) may use, started first when ``start``."""
        reports: list[ServerReport] = []
        for server in (await self.servers(session_id, working_dir)).values():
            trusted = await self.trust.is_trusted_async(server)
            managed = self.pool.server(server, working_dir)
            if start and trusted:
                try:
                    await managed.tools()
                except ToolError:
                    pass  # the status says why
            reports.append(_report(server, trusted, managed))
        return reports


def new_mcp_source() -> McpToolSource:
    """A source with its own server pool and the user's trust store."""
    return McpToolSource(McpServerPool(), TrustStore())


def _report(server: ServerDefinition, trusted: bool, managed: ManagedServer) -> ServerReport:
    status = managed.status()
    tools = tuple(
        (exposed_name(server.name, tool.name), tool.name, tool.description, tool.read_only)
        for tool in status.tools
    )
    return ServerReport(definition=server, trusted=trusted, status=status, tools=tools)


def _wanted_tools(entries: Sequence[str]) -> dict[str, set[str] | None]:
    """Server → the tool names selected (``None``: every tool of the server)."""
    wanted: dict[str, set[str] | None] = {}
    for entry in entries:
        parsed = parse_mcp_selector(entry)
        if parsed is None:
            continue
        server, tool = parsed
        if tool is None:
            wanted[server] = None
        elif wanted.get(server, set()) is not None:
            selected = wanted.setdefault(server, set())
            assert selected is not None
            selected.add(tool)
    return wanted


async def ask_trust(ctx: ToolCallContext, server: ServerDefinition) -> None:
    """Ask whether a project-declared server may run; raise ``ToolDenied`` if not.

    The question is shown like a tool call (``mcp:NAME``) so every editor renders it as an
    ordinary card with approval buttons, followed by its outcome.
    """
    tool_id = f"{MCP_SELECTOR_PREFIX}{server.name}"
    call_id = f"mcp-trust-{uuid.uuid4().hex[:12]}"
    transport = server.transport
    ctx.emit(
        AgentToolCall(
            tool_id=tool_id,
            call_id=call_id,
            tool_input={
                "trust": server.name,
                "declaredIn": server.source or "project.toml",
                "command" if transport == "stdio" else "url": server.describe(),
            },
            model=ctx.model,
        )
    )
    need = ApprovalNeed(
        action="process" if transport == "stdio" else "egress",
        preview=ApprovalPreview(command=server.describe())
        if transport == "stdio"
        else ApprovalPreview(host=server.host()),
        scope_key=TRUST_SCOPE,
    )
    try:
        await require_approval(ctx, tool_id=tool_id, call_id=call_id, need=need, always_ask=True)
    except ToolDenied as denied:
        ctx.emit(_trust_result(tool_id, call_id, trusted=False, reason=denied.message))
        raise
    except BaseException:
        ctx.emit(_trust_result(tool_id, call_id, trusted=False, reason="the turn was aborted"))
        raise
    ctx.emit(_trust_result(tool_id, call_id, trusted=True, reason=None))


def _trust_result(tool_id: str, call_id: str, *, trusted: bool, reason: str | None) -> Any:
    summary = (
        "Trusted for this workspace; the server may start."
        if trusted
        else f"Not trusted ({reason}); the server was not started."
    )
    return AgentToolResult(
        tool_id=tool_id,
        call_id=call_id,
        success=trusted,
        output_summary=summary,
        duration_ms=0,
        error_code=None if trusted else "tool_denied",
    )
