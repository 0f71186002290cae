"""One running MCP server, spoken to through the official SDK's client (``mcp.Client``).

The SDK's client is an async context manager whose transports run anyio task groups, so it
must be entered and left by the same task: each :class:`McpConnection` owns one runner task
that opens the client, reports ready, and holds it open until :meth:`McpConnection.close`
(or until the server goes away). Requests are made from the callers' tasks; cancelling one
(an aborted turn, a timeout) makes the SDK send ``notifications/cancelled`` for it.

A stdio server's stderr goes to our log line by line (logger ``relavium_lsp.mcp.stderr``)
through a pipe we read; the pipe reaching end-of-file means the process is gone, which marks
the connection dead so the next use restarts it. Its environment is the SDK's small safe set
(``HOME``, ``PATH``, ``USER``…) plus what the definition sets — never our own environment, so
no ``*_API_KEY`` or database key reaches a server.

SDK types stay in this module and :mod:`relavium_lsp.mcp.results`: the rest of the package
sees :class:`ListedTool` / :class:`ListedPrompt`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections import deque
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, TextIO

from relavium_lsp import __version__
from relavium_lsp.config.mcp_servers import ServerDefinition

_log = logging.getLogger(__name__)
_stderr_log = logging.getLogger("relavium_lsp.mcp.stderr")
STDERR_TAIL_LINES = 20
MAX_STDERR_LINE = 2_000
MAX_LIST_PAGES = 50
CLOSE_TIMEOUT_S = 10.0
STDERR_DRAIN_S = 2.0
_READ_CHUNK = 4_096
# The MCP SDK's HTTP timeouts: 30 s to connect and write, 300 s between reads of a stream.
MCP_HTTP_TIMEOUT_S = 30.0
MCP_HTTP_READ_TIMEOUT_S = 300.0


class ConnectionLost(Exception):
    """The server went away (exited, closed the connection, or became unreachable)."""


class StartFailed(Exception):
    """The server could not be started or did not complete the handshake."""


@dataclass(frozen=True)
class ListedTool:
    """A tool as a server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = False
    title: str | None = None


@dataclass(frozen=True)
class PromptArgument:
    """One argument of a server prompt."""

    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class ListedPrompt:
    """A prompt (template) as a server lists it."""

    name: str
    description: str
    arguments: tuple[PromptArgument, ...] = ()


class _StderrPump:
    """A pipe for the server's stderr, read line by line into our log."""

    def __init__(self, server_name: str) -> None:
        self._server_name = server_name
        read_fd, write_fd = os.pipe()
        self._reader_file = os.fdopen(read_fd, "rb", buffering=0)
        self.errlog: TextIO = open(write_fd, "w", encoding="utf-8")
        self.tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self.closed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._pump())

    def release_writer(self) -> None:
        """Close our copy of the write end: only the server holds it from now on."""
        with contextlib.suppress(OSError):
            self.errlog.close()

    async def _pump(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), self._reader_file
        )
        pending = b""
        try:
            while chunk := await reader.read(_READ_CHUNK):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    self._emit(line)
                if len(pending) > MAX_STDERR_LINE:
                    self._emit(pending)
                    pending = b""
            if pending:
                self._emit(pending)
        finally:
            transport.close()
            self.closed.set()

    def _emit(self, raw: bytes) -> None:
        line = raw.decode("utf-8", errors="replace").rstrip()[:MAX_STDERR_LINE]
        if line:
            self.tail.append(line)
            _stderr_log.info("[%s] %s", self._server_name, line)

    async def aclose(self) -> None:
        """Log what the stopped server still had in the pipe, then close it."""
        self.release_writer()
        if self._task is not None:
            # The process is gone by now, so end-of-file follows its last lines; a grandchild
            # that kept the pipe open must not hold the shutdown up.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._task), STDERR_DRAIN_S)
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        with contextlib.suppress(OSError):
            self._reader_file.close()


class McpConnection:
    """A live client session with one server, owned by a runner task."""

    def __init__(
        self,
        server: ServerDefinition,
        *,
        cwd: str | None,
        env: Mapping[str, str],
        headers: Mapping[str, str],
    ) -> None:
        self.server = server
        self._cwd = cwd
        self._env = dict(env)
        self._headers = dict(headers)
        self._client: Any = None
        self._ready: asyncio.Future[None] | None = None
        self._stop = asyncio.Event()
        self._gone = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None
        self._stderr: _StderrPump | None = None
        self.tools_changed = False

    @property
    def alive(self) -> bool:
        """Whether the connection is open and the server has not gone away."""
        return self._client is not None and not self._gone.is_set()

    @property
    def gone(self) -> asyncio.Event:
        """Set once the server went away or the connection was closed."""
        return self._gone

    def stderr_tail(self) -> list[str]:
        """The last lines the server wrote to stderr (for doctor and start errors)."""
        return list(self._stderr.tail) if self._stderr is not None else []

    async def start(self, timeout_s: float) -> None:
        """Start the server and complete the MCP handshake; raise :class:`StartFailed`."""
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._runner = asyncio.create_task(self._run(timeout_s))
        try:
            await asyncio.shield(self._ready)
        except asyncio.CancelledError:
            await self.close()
            raise

    async def _run(self, timeout_s: float) -> None:
        assert self._ready is not None
        try:
            async with AsyncExitStack() as stack:
                try:
                    async with asyncio.timeout(timeout_s):
                        self._client = await self._open(stack)
                except TimeoutError:
                    raise StartFailed(
                        f"it did not finish the MCP handshake within {timeout_s:g} s"
                    ) from None
                finally:
                    if self._stderr is not None:
                        self._stderr.release_writer()
                self._ready.set_result(None)
                waits = [asyncio.ensure_future(self._stop.wait())]
                if self._stderr is not None:
                    waits.append(asyncio.ensure_future(self._stderr.closed.wait()))
                try:
                    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for wait in waits:
                        wait.cancel()
        except BaseException as error:
            was_running = self._ready.done()
            if not was_running:
                if isinstance(error, asyncio.CancelledError):
                    self._ready.cancel()
                else:
                    self._ready.set_exception(_start_error(error))
            if not isinstance(error, Exception):
                raise
            if was_running and not self._stop.is_set():
                _log.warning("MCP server %r stopped: %s", self.server.name, _describe(error))
        finally:
            self._client = None
            self._gone.set()
            if self._stderr is not None:
                await self._stderr.aclose()

    async def _open(self, stack: AsyncExitStack) -> Any:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client
        from mcp_types import Implementation

        config = self.server.config
        transport: Any
        if config.command is not None:
            self._stderr = _StderrPump(self.server.name)
            self._stderr.start()
            params = StdioServerParameters(
                command=config.command, args=list(config.args), env=self._env, cwd=self._cwd
            )
            transport = stdio_client(params, errlog=self._stderr.errlog)
        else:
            import httpx2

            # The SDK's own defaults (a response stream may stay open for minutes); our
            # client only to send the configured headers, as the SDK documents.
            timeout = httpx2.Timeout(MCP_HTTP_TIMEOUT_S, read=MCP_HTTP_READ_TIMEOUT_S)
            http_client = await stack.enter_async_context(
                httpx2.AsyncClient(headers=self._headers or None, timeout=timeout)
            )
            transport = streamable_http_client(str(config.url), http_client=http_client)
        client = Client(
            transport,
            client_info=Implementation(name="relavium-lsp", version=__version__),
            message_handler=self._on_message,
            cache=None,
        )
        return await stack.enter_async_context(client)

    async def _on_message(self, message: Any) -> None:
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self.tools_changed = True

    def _require_client(self) -> Any:
        if not self.alive:
            raise ConnectionLost("the server is not running")
        return self._client

    async def list_tools(self) -> list[ListedTool]:
        """Every tool the server offers (all pages)."""
        client = self._require_client()
        tools: list[ListedTool] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = await self._request(client.list_tools(cursor=cursor))
            tools.extend(
                ListedTool(
                    name=tool.name,
                    description=tool.description or "",
                    input_schema=dict(tool.input_schema),
                    read_only=bool(tool.annotations and tool.annotations.read_only_hint),
                    title=tool.title or (tool.annotations.title if tool.annotations else None),
                )
                for tool in page.tools
            )
            cursor = page.next_cursor
            if cursor is None:
                break
        self.tools_changed = False
        return tools

    async def list_prompts(self) -> list[ListedPrompt]:
        """Every prompt the server offers (empty when it has no prompts capability)."""
        client = self._require_client()
        if client.server_capabilities.prompts is None:
            return []
        page = await self._request(client.list_prompts())
        return [
            ListedPrompt(
                name=prompt.name,
                description=prompt.description or "",
                arguments=tuple(
                    PromptArgument(
                        name=argument.name,
                        description=argument.description or "",
                        required=bool(argument.required),
                    )
                    for argument in prompt.arguments or ()
                ),
            )
            for prompt in page.prompts
        ]

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> list[tuple[str, Any]]:
        """A prompt's messages as ``(role, SDK content block)`` pairs."""
        client = self._require_client()
        result = await self._request(client.get_prompt(name, dict(arguments)))
        return [(message.role, message.content) for message in result.messages]

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Call a tool; returns the SDK's ``CallToolResult``."""
        client = self._require_client()
        return await self._request(client.call_tool(name, dict(arguments)))

    async def _request(self, request: Any) -> Any:
        """Await one SDK request, turning "the server is gone" into :class:`ConnectionLost`."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        try:
            return await request
        except MCPError as error:
            if error.code == CONNECTION_CLOSED or self._gone.is_set():
                self._gone.set()
                raise ConnectionLost(error.message) from None
            raise
        except (OSError, ConnectionError) as error:
            self._gone.set()
            raise ConnectionLost(type(error).__name__) from None
        except Exception as error:
            if _is_transport_error(error):
                self._gone.set()
                raise ConnectionLost(type(error).__name__) from None
            raise

    async def close(self) -> None:
        """Stop the server (the SDK closes stdin, then terminates, then kills) and wait."""
        self._stop.set()
        runner = self._runner
        if runner is None:
            return
        if self._ready is not None and not self._ready.done():
            runner.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(runner), CLOSE_TIMEOUT_S)
        except TimeoutError:
            _log.warning("MCP server %r did not stop in time", self.server.name)
            runner.cancel()
        except (asyncio.CancelledError, Exception):
            if not runner.done():
                raise


def _is_transport_error(error: Exception) -> bool:
    """HTTP transport failures (httpx2) and broken anyio streams mean the server is gone."""
    import anyio
    import httpx2

    return isinstance(
        error,
        httpx2.TransportError
        | anyio.ClosedResourceError
        | anyio.BrokenResourceError
        | anyio.EndOfStream,
    )


def _start_error(error: BaseException) -> StartFailed:
    return error if isinstance(error, StartFailed) else StartFailed(_describe(error))


def _describe(error: BaseException) -> str:
    """A short, secret-free reason (no exception text from HTTP layers, which may echo URLs)."""
    if isinstance(error, FileNotFoundError):
        return f"the command was not found ({error.filename or 'unknown'})"
    if isinstance(error, PermissionError):
        return "the command is not executable"
    if isinstance(error, StartFailed):
        return str(error)
    if isinstance(error, BaseExceptionGroup):
        inner = error.exceptions[0] if error.exceptions else error
        return _describe(inner)
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
        return "it exited before completing the MCP handshake"
    if isinstance(error, MCPError):
        return f"the server answered with an error: {error.message[:300]}"
    if isinstance(error, OSError):
        return f"{type(error).__name__}: {error.strerror or 'operating system error'}"
    return type(error).__name__
