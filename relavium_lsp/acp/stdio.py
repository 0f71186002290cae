"""Serving the ACP agent over stdio, with stdout reserved for the protocol.

The protocol owns the process's original stdout. Before anything else runs, that descriptor
is duplicated for the protocol and descriptor 1 is pointed at stderr, so a stray ``print``,
a library's chatter or a child process that inherits fd 1 can never corrupt the JSON-RPC
stream — at worst they end up in the editor's log of our stderr.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import BinaryIO

from relavium_lsp.acp.agent import RelaviumAcpAgent
from relavium_lsp.acp.connection import AgentConnection
from relavium_lsp.acp.transport import READ_LIMIT_BYTES


def reserve_stdout() -> BinaryIO:
    """Take the original stdout for the protocol and send fd 1 (and ``sys.stdout``) to stderr."""
    sys.stdout.flush()
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return protocol_out


async def protocol_streams(
    protocol_out: BinaryIO,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Asyncio streams over stdin and the reserved stdout."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_LIMIT_BYTES)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(loop), protocol_out
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


async def serve_stdio(*, history_path: str | None = None) -> None:
    """Run one ACP agent on stdin/stdout until the client closes the connection."""
    reader, writer = await protocol_streams(reserve_stdout())
    agent = RelaviumAcpAgent(history_path=history_path)
    connection = AgentConnection(agent, writer, reader)
    try:
        await connection.listen()
    finally:
        await asyncio.shield(connection.close())
        await agent.close()
        writer.close()
