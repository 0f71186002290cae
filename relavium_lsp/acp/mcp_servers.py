"""``mcpServers`` of ``session/new`` / ``load`` / ``resume``: the client's servers, per session.

An ACP client passes the MCP servers the user configured in the editor; they are the user's
own choice, so they need no trust prompt, and every one of their tools is offered to the
session's agent (calls still ask for approval like any other side effect). Stdio and
Streamable HTTP servers are supported; SSE and ``acp`` servers are not (logged and skipped).
Names are normalised to our server-name rules (lowercase, ``-`` for anything else); env
values and headers stay in memory for the session only.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio
from pydantic import ValidationError

from relavium_lsp.config.mcp_servers import ServerDefinition
from relavium_lsp.contracts.mcp import SERVER_NAME_MAX, McpServerConfig, valid_server_name

_log = logging.getLogger(__name__)
_NOT_NAME = re.compile(r"[^a-z0-9]+")


def client_servers(offered: Sequence[Any] | None) -> list[ServerDefinition]:
    """The servers of a request that this agent can run, as session-scoped definitions."""
    servers: dict[str, ServerDefinition] = {}
    for server in offered or ():
        name = server_name(getattr(server, "name", ""))
        if name is None or name in servers:
            _log.info("ignoring an MCP server with a missing or repeated name")
            continue
        try:
            definition = _definition(name, server)
        except ValidationError as error:
            _log.info("ignoring MCP server %r: %d invalid field(s)", name, error.error_count())
            continue
        if definition is not None:
            servers[name] = definition
    return list(servers.values())


def server_name(raw: str) -> str | None:
    """``"My Files"`` → ``my-files``; ``None`` when nothing usable is left."""
    name = _NOT_NAME.sub("-", raw.lower()).strip("-")[:SERVER_NAME_MAX].strip("-")
    return name if valid_server_name(name) else None


def _definition(name: str, server: Any) -> ServerDefinition | None:
    if isinstance(server, McpServerStdio):
        return ServerDefinition(
            name=name,
            origin="client",
            config=McpServerConfig(command=server.command, args=list(server.args)),
            client_env=tuple((item.name, item.value) for item in server.env),
        )
    if isinstance(server, HttpMcpServer):
        return ServerDefinition(
            name=name,
            origin="client",
            config=McpServerConfig.model_validate({"url": server.url}),
            client_headers=tuple((item.name, item.value) for item in server.headers),
        )
    _log.info("ignoring MCP server %r: its transport is not supported", name)
    return None
