"""The MCP part of ``relavium-lsp doctor``: every configured server and whether it starts.

Servers from the user's config (and project servers the user already trusted in this
workspace) are started once, listed and stopped (HTTP servers are not contacted with
``--offline``); a project server nobody trusted yet is
reported without being started — doctor never runs a repository's command behind the user's
back. A server that fails shows why, with the last line it wrote to stderr.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, NamedTuple

from relavium_lsp.config.mcp_servers import ServerDefinition
from relavium_lsp.errors import ToolError
from relavium_lsp.mcp.pool import McpServerPool
from relavium_lsp.mcp.trust import TrustStore

MAX_TOOLS_SHOWN = 6
START_HINT = "check the command, its arguments and the keychain entries it needs"


class McpCheck(NamedTuple):
    """One doctor line about a server."""

    check: str
    status: Literal["ok", "problem", "info"]
    summary: str
    hint: str | None = None


def mcp_checks(
    servers: Mapping[str, ServerDefinition], workspace: Path, home: Path, *, network: bool
) -> list[McpCheck]:
    """One check per configured server, starting those that may (HTTP ones on ``network``)."""
    if not servers:
        return []
    return asyncio.run(_check_all(servers, workspace, home, network))


async def _check_all(
    servers: Mapping[str, ServerDefinition], workspace: Path, home: Path, network: bool
) -> list[McpCheck]:
    trust = TrustStore(home)
    pool = McpServerPool()
    checks: list[McpCheck] = []
    try:
        for name, server in servers.items():
            label = f"MCP server {name}"
            where = f"{server.origin} config, {server.transport}: {server.describe()}"
            if not server.config.enabled:
                checks.append(McpCheck(label, "info", f"disabled ({where})"))
                continue
            if server.transport == "http" and not network:
                checks.append(McpCheck(label, "info", f"not contacted (--offline) ({where})"))
                continue
            if not trust.is_trusted(server):
                checks.append(
                    McpCheck(
                        label,
                        "info",
                        f"declared by {server.source}; not trusted in this workspace, so not "
                        f"started ({where})",
                        "it asks for trust the first time an agent selects it",
                    )
                )
                continue
            managed = pool.server(server, str(workspace))
            try:
                tools = await managed.tools()
            except ToolError as error:
                checks.append(McpCheck(label, "problem", error.message, START_HINT))
                continue
            names = ", ".join(tool.name for tool in tools[:MAX_TOOLS_SHOWN])
            more = (
                f", … {len(tools) - MAX_TOOLS_SHOWN} more" if len(tools) > MAX_TOOLS_SHOWN else ""
            )
            checks.append(
                McpCheck(label, "ok", f"starts; {len(tools)} tools ({names}{more}); {where}")
            )
    finally:
        await pool.close()
    return checks
