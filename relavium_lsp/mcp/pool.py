"""The MCP servers of one relavium process: started lazily, shared, restarted, stopped.

:class:`McpServerPool` keeps one :class:`ManagedServer` per distinct definition (and working
directory); every session that uses the same server shares its process. A server starts the
first time something needs it — a turn whose agent selects it, ``relavium/listTools`` with
``start``, ``doctor`` — and stops when the pool closes (the relavium server shutting down).

Crashes and restarts: when a server exits or its connection drops, the call in flight fails
with a clear message and the server is marked ``crashed``; the next use starts it again.
Consecutive failures (crashes, failed starts) back off: the first restart is immediate,
then 1, 2, 4 … 30 s must pass before the next attempt — a use inside that window fails at
once, saying when the server will be tried again. A successful tool call resets the count.

Every call has a deadline (the server's ``timeout_s``): past it the request is cancelled
(the SDK sends ``notifications/cancelled``) and the call fails; the connection stays up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from relavium_lsp.config.mcp_servers import ServerDefinition
from relavium_lsp.errors import ToolError
from relavium_lsp.llm.keys import keychain_key
from relavium_lsp.mcp.connection import (
    ConnectionLost,
    ListedPrompt,
    ListedTool,
    McpConnection,
    StartFailed,
)
from relavium_lsp.mcp.results import tool_run_from_result
from relavium_lsp.mcp.secrets import KeychainLookup, MissingSecret, resolve_secrets
from relavium_lsp.secret_shapes import redact_secrets
from relavium_lsp.tools.base import ToolRun
from relavium_lsp.tools.netguard import EgressGuard

ServerState = Literal["idle", "starting", "running", "crashed", "failed", "stopped"]
MAX_BACKOFF_S = 30.0
_log = logging.getLogger(__name__)
Clock = Callable[[], float]
T = TypeVar("T")


def backoff_s(failures: int) -> float:
    """How long after the last failure the next start may be tried."""
    if failures <= 1:
        return 0.0
    return float(min(MAX_BACKOFF_S, 2 ** (failures - 2)))


class McpUnavailable(ToolError):
    """A server could not be started (or is backing off); its tools cannot be used now."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="tool_unavailable")


@dataclass(frozen=True)
class ServerStatus:
    """What ``relavium/listTools`` and ``doctor`` show about a server."""

    state: ServerState
    error: str | None
    tools: tuple[ListedTool, ...]
    failures: int


class ManagedServer:
    """One server definition's lifecycle in this process."""

    def __init__(
        self,
        definition: ServerDefinition,
        *,
        cwd: str | None,
        lookup: KeychainLookup,
        clock: Clock,
        egress: EgressGuard,
    ) -> None:
        self.definition = definition
        self.cwd = cwd
        self._egress = egress
        self._lookup = lookup
        self._clock = clock
        self._lock = asyncio.Lock()
        self._connection: McpConnection | None = None
        self._retiring: set[asyncio.Task[None]] = set()
        self._tools: tuple[ListedTool, ...] = ()
        self._state: ServerState = "idle"
        self._error: str | None = None
        self._failures = 0
        self._retry_at = 0.0

    @property
    def name(self) -> str:
        """The server's configured name."""
        return self.definition.name

    def status(self) -> ServerStatus:
        """The current state, last error and known tools."""
        state = self._state
        if state == "running" and (self._connection is None or not self._connection.alive):
            state = "crashed"
        return ServerStatus(state, self._error, self._tools, self._failures)

    def stderr_tail(self) -> list[str]:
        """The last stderr lines of the current (or last) process."""
        return self._connection.stderr_tail() if self._connection is not None else []

    async def tools(self) -> tuple[ListedTool, ...]:
        """The server's tools, starting it if needed (re-listed after ``list_changed``)."""
        connection = await self._running()
        if connection.tools_changed:
            with contextlib.suppress(ConnectionLost):
                self._tools = tuple(await connection.list_tools())
        return self._tools

    async def prompts(self) -> list[ListedPrompt]:
        """The server's prompts, starting it if needed."""
        connection = await self._running()
        return await self._guarded(connection, "listing prompts", connection.list_prompts())

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> list[tuple[str, Any]]:
        """One prompt's messages (SDK content blocks; see :mod:`relavium_lsp.mcp.prompts`)."""
        connection = await self._running()
        return await self._guarded(
            connection, f"prompt {name}", connection.get_prompt(name, arguments)
        )

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolRun:
        """Call one tool under the server's deadline; failures raise :class:`ToolError`."""
        connection = await self._running()
        timeout_s = self.definition.config.timeout_s
        try:
            async with asyncio.timeout(timeout_s):
                result = await self._guarded(
                    connection, f"running {tool}", connection.call_tool(tool, arguments)
                )
        except TimeoutError:
            raise ToolError(
                f"the MCP server {self.name!r} did not finish {tool} within {timeout_s:g} s; "
                "the request was cancelled"
            ) from None
        self._failures = 0
        return tool_run_from_result(result)

    async def _guarded(self, connection: McpConnection, doing: str, request: Awaitable[T]) -> T:
        from mcp.shared.exceptions import MCPError

        try:
            return await request
        except ConnectionLost:
            self._crashed(connection)
            raise ToolError(
                f"the MCP server {self.name!r} stopped while {doing}; it will be restarted "
                "the next time it is needed"
            ) from None
        except MCPError as error:
            raise ToolError(
                f"the MCP server {self.name!r} refused {doing}: {error.message[:500]}"
            ) from None

    async def _running(self) -> McpConnection:
        connection = self._connection
        if connection is not None and connection.alive:
            return connection
        async with self._lock:
            connection = self._connection
            if connection is not None and connection.alive:
                return connection
            if connection is not None:
                self._crashed(connection)
            wait = self._retry_at - self._clock()
            if wait > 0:
                raise McpUnavailable(
                    f"the MCP server {self.name!r} failed {self._failures} times in a row "
                    f"(last: {self._error}); the next start is tried in {wait:.0f} s"
                )
            return await self._start()

    async def _start(self) -> McpConnection:
        self._state = "starting"
        try:
            secrets = await asyncio.to_thread(resolve_secrets, self.definition, self._lookup)
        except MissingSecret as missing:
            raise self._start_failed(str(missing)) from None
        connection = McpConnection(
            self.definition,
            cwd=self.cwd,
            env=secrets.env,
            headers=secrets.headers,
            egress=self._egress,
        )
        try:
            await connection.start(self.definition.config.startup_timeout_s)
            tools = await connection.list_tools()
        except Exception as error:
            self._retire(connection)
            reason = _start_reason(error)
            tail = connection.stderr_tail()
            if tail:
                reason += f" (its last words: {redact_secrets(tail[-1])[:300]})"
            raise self._start_failed(reason) from None
        except asyncio.CancelledError:
            self._retire(connection)
            self._state = "idle"
            raise
        self._connection = connection
        self._tools = tuple(tools)
        self._state = "running"
        self._error = None
        _log.info("MCP server %r started (%d tools)", self.name, len(tools))
        return connection

    def _start_failed(self, reason: str) -> McpUnavailable:
        self._failures += 1
        self._retry_at = self._clock() + backoff_s(self._failures)
        self._state = "failed"
        self._error = reason
        _log.warning("MCP server %r could not start: %s", self.name, reason)
        return McpUnavailable(f"the MCP server {self.name!r} could not start: {reason}")

    def _crashed(self, connection: McpConnection) -> None:
        if self._connection is not connection:
            return
        self._connection = None
        self._failures += 1
        self._retry_at = self._clock() + backoff_s(self._failures)
        self._state = "crashed"
        self._error = "the server exited or dropped the connection"
        _log.warning("MCP server %r stopped unexpectedly", self.name)
        self._retire(connection)

    def _retire(self, connection: McpConnection) -> None:
        """Close a dead connection in the background (reaping its process)."""
        task = asyncio.ensure_future(connection.close())
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    async def stop(self) -> None:
        """Stop the server process and wait for every retired one."""
        async with self._lock:
            connection, self._connection = self._connection, None
            self._state = "stopped"
        if connection is not None:
            await connection.close()
        if self._retiring:
            await asyncio.gather(*self._retiring, return_exceptions=True)


def _start_reason(error: BaseException) -> str:
    if isinstance(error, StartFailed):
        return str(error)
    if isinstance(error, ConnectionLost):
        return "the server exited during the handshake"
    _log.debug("MCP start failed", exc_info=error)
    return f"unexpected error ({type(error).__name__})"


class McpServerPool:
    """Every MCP server this process runs, by definition and working directory."""

    def __init__(
        self,
        *,
        lookup: KeychainLookup = keychain_key,
        clock: Clock = time.monotonic,
        egress: EgressGuard | None = None,
    ) -> None:
        self._lookup = lookup
        self._clock = clock
        self._egress = egress or EgressGuard()
        self._servers: dict[str, ManagedServer] = {}
        self._closed = False

    def server(self, definition: ServerDefinition, working_dir: str | None) -> ManagedServer:
        """The managed server for a definition (created idle on first request)."""
        if self._closed:
            raise McpUnavailable("the MCP servers are shutting down")
        key = definition.pool_key(working_dir)
        managed = self._servers.get(key)
        if managed is None:
            managed = ManagedServer(
                definition,
                cwd=definition.resolved_cwd(working_dir),
                lookup=self._lookup,
                clock=self._clock,
                egress=self._egress,
            )
            self._servers[key] = managed
        return managed

    def known(self) -> list[ManagedServer]:
        """Every server this pool has seen, in first-use order."""
        return list(self._servers.values())

    async def release(self, definitions: list[ServerDefinition], working_dir: str | None) -> None:
        """Stop and forget the servers of these definitions (a client's per-session servers)."""
        stopping = [
            managed
            for definition in definitions
            if (managed := self._servers.pop(definition.pool_key(working_dir), None)) is not None
        ]
        await asyncio.gather(*(managed.stop() for managed in stopping))

    async def close(self) -> None:
        """Stop every server (the relavium server is shutting down)."""
        self._closed = True
        servers, self._servers = list(self._servers.values()), {}
        await asyncio.gather(*(managed.stop() for managed in servers), return_exceptions=True)
