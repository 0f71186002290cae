"""A real engine whose agent uses real MCP servers (the probe server, mcp-server-time).

Servers are configured the way a user does it — ``[mcp.servers.*]`` in ``config.toml`` or a
workspace's ``project.toml`` — and started by the real pool through the official SDK.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from relavium_lsp.mcp.pool import McpServerPool
from relavium_lsp.mcp.secrets import KeychainLookup
from relavium_lsp.mcp.source import McpToolSource
from relavium_lsp.mcp.trust import TrustStore
from relavium_lsp.paths import relavium_home
from relavium_lsp.tools.netguard import EgressGuard
from relavium_lsp.tools.registry import default_registry
from tests.unit.engine.engine_harness import CountingProvider, Harness, engine

PROBE_SERVER = Path(__file__).resolve().parents[2] / "mcp_servers" / "probe_server.py"

AGENT_YAML = """\
id: helper
name: Helper
description: test agent
model: gpt-4o-mini
provider: scripted
system_prompt: "You help."
tools: {tools}
"""


def probe_table(name: str = "probe", *, args: Sequence[str] = (), extra: str = "") -> str:
    """A ``[mcp.servers.NAME]`` table that runs the probe server over stdio."""
    argv = [str(PROBE_SERVER), *args]
    return (
        f"[mcp.servers.{name}]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps(argv)}\n{extra}\n"
    )


def time_server_table(name: str = "time") -> str:
    """The published ``mcp-server-time`` (installed by the dev extras)."""
    command = shutil.which("mcp-server-time", path=str(Path(sys.executable).parent))
    assert command is not None, "mcp-server-time is part of the [dev] extras"
    return (
        f"[mcp.servers.{name}]\ncommand = {json.dumps(command)}\n"
        'args = ["--local-timezone", "UTC"]\n'
    )


def write_user_config(text: str) -> Path:
    """The user's own ``config.toml`` (in the isolated test home)."""
    home = relavium_home()
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


@dataclass
class McpHarness:
    """The engine harness plus the MCP source behind its registry."""

    h: Harness
    source: McpToolSource


@asynccontextmanager
async def mcp_engine(
    tmp_path: Path,
    *providers: CountingProvider,
    user_toml: str = "",
    project_toml: str = "",
    tools: Sequence[str] = ("mcp:probe",),
    lookup: KeychainLookup | None = None,
    db_path: Path | None = None,
    egress: EgressGuard | None = None,
) -> AsyncIterator[McpHarness]:
    """An engine whose ``helper`` agent selects ``tools``; servers from the given configs.

    ``egress`` is the guard HTTP servers are reached through (a test resolver, say).
    """
    if user_toml:
        write_user_config(user_toml)
    pool = (
        McpServerPool(lookup=lookup, egress=egress)
        if lookup is not None
        else McpServerPool(egress=egress)
    )
    source = McpToolSource(pool, TrustStore())
    registry = default_registry(sources=[source])
    try:
        async with engine(
            tmp_path, *providers, project_toml=project_toml, tools=registry, db_path=db_path
        ) as h:
            agent = h.workspace / ".relavium" / "agents" / "helper.agent.yaml"
            agent.write_text(AGENT_YAML.format(tools=json.dumps(list(tools))), encoding="utf-8")
            yield McpHarness(h=h, source=source)
    finally:
        await source.close()


def process_exists(pid: int) -> bool:
    """Whether a process with this id is alive (zombies of our own children excluded)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    if status.exists():
        return "\nState:\tZ" not in status.read_text(encoding="utf-8", errors="replace")
    return True
