"""The agent's side of one ACP connection: the SDK's router, plus what the SDK lacks.

The PyPI SDK (``agent-client-protocol`` 0.12) routes every stable v1 agent method except
``session/delete``, which its schema defines but its router never registers. This
connection takes the SDK's router, adds that route, and offers the agent the four client
methods it calls (:class:`ClientPeer`) over the SDK's JSON-RPC :class:`~acp.connection.
Connection` — the same request ids and error handling as ``AgentSideConnection``, over our
bounded transport (:mod:`relavium_lsp.acp.transport`) instead of the SDK's stdio framing.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from acp import AGENT_METHODS, CLIENT_METHODS
from acp.agent.router import build_agent_router
from acp.connection import Connection
from acp.schema import (
    DeleteSessionRequest,
    PermissionOption,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
    ToolCallUpdate,
    WriteTextFileRequest,
    WriteTextFileResponse,
)
from acp.utils import normalize_result, notify_model, request_model, request_optional_model

from relavium_lsp.acp.outbox import SessionUpdate
from relavium_lsp.acp.transport import BoundedNdjsonTransport


class ClientPeer(Protocol):
    """What the agent asks of the client."""

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        """Send one ``session/update`` notification."""
        ...

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """``session/request_permission``."""
        ...

    async def read_text_file(self, session_id: str, path: str) -> ReadTextFileResponse:
        """``fs/read_text_file`` (the client's buffer)."""
        ...

    async def write_text_file(
        self, session_id: str, path: str, content: str
    ) -> WriteTextFileResponse | None:
        """``fs/write_text_file`` (into the client's buffer)."""
        ...


class ConnectedAgent(Protocol):
    """An agent object that wants to know its connection."""

    def on_connect(self, conn: ClientPeer) -> None:
        """Called once, before any message is handled."""
        ...


class AgentConnection:
    """JSON-RPC over a byte stream pair, dispatching to ``agent`` (a :class:`ClientPeer`)."""

    def __init__(
        self, agent: ConnectedAgent, writer: asyncio.StreamWriter, reader: asyncio.StreamReader
    ) -> None:
        router = build_agent_router(agent, use_unstable_protocol=True)  # type: ignore[arg-type]
        router.route_request(
            AGENT_METHODS["session_delete"],
            DeleteSessionRequest,
            agent,
            "delete_session",
            adapt_result=normalize_result,
        )
        transport = BoundedNdjsonTransport(reader, writer)
        self._conn = Connection(router, transport, listening=False)
        agent.on_connect(self)

    async def listen(self) -> None:
        """Handle messages until the client closes the stream."""
        await self._conn.main_loop()

    async def close(self) -> None:
        """Stop handling messages and fail requests still waiting for an answer."""
        await self._conn.close()

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        """Send one ``session/update`` notification."""
        notification = SessionNotification(session_id=session_id, update=update)
        await notify_model(self._conn, CLIENT_METHODS["session_update"], notification)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """``session/request_permission``."""
        request = RequestPermissionRequest(
            session_id=session_id, tool_call=tool_call, options=options
        )
        return await request_model(
            self._conn,
            CLIENT_METHODS["session_request_permission"],
            request,
            RequestPermissionResponse,
        )

    async def read_text_file(self, session_id: str, path: str) -> ReadTextFileResponse:
        """``fs/read_text_file``."""
        request = ReadTextFileRequest(session_id=session_id, path=path)
        return await request_model(
            self._conn, CLIENT_METHODS["fs_read_text_file"], request, ReadTextFileResponse
        )

    async def write_text_file(
        self, session_id: str, path: str, content: str
    ) -> WriteTextFileResponse | None:
        """``fs/write_text_file``."""
        request = WriteTextFileRequest(session_id=session_id, path=path, content=content)
        return await request_optional_model(
            self._conn, CLIENT_METHODS["fs_write_text_file"], request, WriteTextFileResponse
        )
