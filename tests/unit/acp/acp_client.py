"""A recording ACP client built on the official SDK's client side, for tests.

:class:`RecordingClient` behaves like a small editor: it records every ``session/update``,
answers ``session/request_permission`` with a scripted option (or cancels the turn, as a
user pressing "stop" would), and implements ``fs/read_text_file`` / ``fs/write_text_file``
over in-memory *unsaved buffers* — a write lands in the buffer, not on disk, exactly like an
editor that has not saved yet. Waiting is condition-based: no sleeps.

Two ways to connect it to the agent:

- :func:`spawn_acp` — ``relavium-lsp acp`` as a real subprocess over stdio;
- :func:`connect_in_process` — the agent in this process over a real socket pair.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.core import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    InitializeResponse,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    WriteTextFileResponse,
)

AGENT_COMMAND = (sys.executable, "-m", "relavium_lsp", "acp", "--log-level", "DEBUG")


@dataclass
class PermissionAsked:
    """One ``session/request_permission`` the agent sent."""

    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]


@dataclass
class RecordingClient:
    """An ACP client that records what the agent did and answers like a scripted user."""

    # An option id ("allow-once", "allow-always", "reject-once", or anything else), "cancel"
    # (cancel the prompt turn, then answer cancelled) or "cancelled" (only answer cancelled).
    decision: str = "allow-once"
    buffers: dict[str, str] = field(default_factory=dict)
    updates: list[tuple[str, Any]] = field(default_factory=list)
    permissions: list[PermissionAsked] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    connection: ClientSideConnection | None = None
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    # -- the Client protocol ---------------------------------------------------------------

    def on_connect(self, conn: Any) -> None:
        return None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        await self._notify()

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        self.permissions.append(PermissionAsked(session_id, tool_call, options))
        await self._notify()
        if self.decision == "cancel":
            # What ACP asks of a client whose user stops the turn: cancel, and answer every
            # pending permission request with the cancelled outcome.
            assert self.connection is not None
            await self.connection.cancel(session_id=session_id)
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        if self.decision == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.decision)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        if not Path(path).is_file():
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        await self._notify()
        return WriteTextFileResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # -- what tests read -------------------------------------------------------------------

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_until(self, predicate: Callable[[], bool]) -> None:
        """Wait (without sleeping) until ``predicate()`` holds."""
        async with self._changed:
            await self._changed.wait_for(predicate)

    def updates_of(self, session_id: str, kind: type[Any] | None = None) -> list[Any]:
        return [
            update
            for sid, update in self.updates
            if sid == session_id and (kind is None or isinstance(update, kind))
        ]

    def message_text(self, session_id: str) -> str:
        return "".join(
            update.content.text for update in self.updates_of(session_id, AgentMessageChunk)
        )

    def tool_events(self, session_id: str, call_id: str) -> list[ToolCallStart | ToolCallProgress]:
        return [
            update
            for update in self.updates_of(session_id)
            if isinstance(update, ToolCallStart | ToolCallProgress)
            and update.tool_call_id == call_id
        ]


def client_capabilities(*, fs: bool) -> ClientCapabilities:
    return ClientCapabilities(fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs))


async def initialize(
    conn: ClientSideConnection, *, fs: bool, early: bool = False
) -> InitializeResponse:
    """``initialize`` as this SDK sends it, or (``early``) exactly as a client built on the
    early v1 schema does: no ``clientInfo``, only the ``fs`` and ``terminal`` capabilities."""
    if early:
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "clientCapabilities": {
                "fs": {"readTextFile": fs, "writeTextFile": fs},
                "terminal": False,
            },
        }
        answer = await conn._conn.send_request("initialize", params)
        return InitializeResponse.model_validate(answer)
    return await conn.initialize(
        protocol_version=PROTOCOL_VERSION,
        client_capabilities=client_capabilities(fs=fs),
        client_info=Implementation(name="acp-test-client", version="1.0"),
    )


async def delete_session(conn: ClientSideConnection, session_id: str) -> Any:
    """``session/delete`` (stable v1; the PyPI SDK 0.12 client has no method for it)."""
    return await conn._conn.send_request("session/delete", {"sessionId": session_id})


def agent_environment(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "RELAVIUM_HOME": str(home / ".relavium"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        "XDG_CONFIG_HOME": str(home / "xdg-config"),
    }


@asynccontextmanager
async def spawn_acp(
    home: Path, client: RecordingClient, *, fs: bool = True
) -> AsyncIterator[tuple[ClientSideConnection, InitializeResponse]]:
    """Start ``relavium-lsp acp`` as a subprocess, connect ``client`` and initialize."""
    async with spawn_agent_process(
        client,
        *AGENT_COMMAND,
        env=agent_environment(home),
        transport_kwargs={"stderr": None, "shutdown_timeout": 10.0},
        use_unstable_protocol=True,
    ) as (conn, process):
        client.connection = conn
        answer = await initialize(conn, fs=fs)
        yield conn, answer
    assert process.returncode == 0, f"the agent exited with {process.returncode}"


@asynccontextmanager
async def connect_in_process(
    client: RecordingClient, *, fs: bool = True, initialized: bool = True, early: bool = False
) -> AsyncIterator[tuple[ClientSideConnection, InitializeResponse | None]]:
    """The agent in this process and ``client`` joined by a real socket pair."""
    from relavium_lsp.acp.agent import RelaviumAcpAgent
    from relavium_lsp.acp.connection import AgentConnection

    agent_socket, client_socket = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=agent_socket)
    client_reader, client_writer = await asyncio.open_connection(sock=client_socket)
    agent = RelaviumAcpAgent()
    agent_conn = AgentConnection(agent, agent_writer, agent_reader)
    serving = asyncio.create_task(agent_conn.listen())
    conn = ClientSideConnection(client, client_writer, client_reader, use_unstable_protocol=True)
    client.connection = conn
    try:
        yield conn, (await initialize(conn, fs=fs, early=early)) if initialized else None
    finally:
        await conn.close()
        await agent_conn.close()
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
        await agent.close()
        # The SDK's connections leave closing the byte streams to their owner.
        for writer in (client_writer, agent_writer):
            writer.close()
            await writer.wait_closed()
