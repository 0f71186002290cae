"""What an MCP server is once configuration is resolved: a :class:`ServerDefinition`.

Definitions come from three places (their ``origin``):

- ``user`` — ``[mcp.servers.*]`` in ``~/.relavium/config.toml``: the user's own choice;
- ``project`` — ``[mcp.servers.*]`` in a workspace's ``.relavium/project.toml``: arbitrary code
  from a cloned repository, so it never starts until the user trusts it
  (:mod:`relavium_lsp.mcp.trust`), and it cannot switch approvals off;
- ``client`` — ``mcpServers`` an ACP client passed in ``session/new``: the user's editor,
  for that session only.

A name in both files is the user's server (the project's is ignored with a warning), so a
repository cannot swap the command behind a name the user already relies on.

The :meth:`ServerDefinition.fingerprint` is the identity trust is remembered by: any change
to the definition (command, args, env, url, …) is a new fingerprint and asks again. Values a
client handed over (env, headers) live in memory only and are never shown or hashed into
anything stored.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from relavium_lsp.contracts.mcp import McpConfig, McpServerConfig

Origin = Literal["user", "project", "client"]
Transport = Literal["stdio", "http"]
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerDefinition:
    """One MCP server as a session may use it."""

    name: str
    origin: Origin
    config: McpServerConfig
    # Project servers: the workspace whose project.toml declared it (the scope of trust).
    workspace: str | None = None
    # The file that declared it, for messages.
    source: str | None = None
    # Literal values from an ACP client: in memory only, never in a repr, log or hash.
    client_env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    client_headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    @property
    def transport(self) -> Transport:
        """``stdio`` for a command, ``http`` for a URL."""
        return "stdio" if self.config.command is not None else "http"

    @property
    def needs_trust(self) -> bool:
        """Whether the user must trust this definition before it may start."""
        return self.origin == "project"

    def fingerprint(self) -> str:
        """sha256 of the definition as configured (what trust is remembered by)."""
        # A field added later (issue 35) counts only when set: earlier answers keep their hash.
        added_later = set() if self.config.allow_local_endpoint else {"allow_local_endpoint"}
        document = {
            "name": self.name,
            "origin": self.origin,
            "workspace": self.workspace,
            "config": self.config.model_dump(mode="json", exclude=added_later),
        }
        canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def pool_key(self, working_dir: str | None) -> str:
        """Which running server this definition shares with other sessions."""
        digest = hashlib.sha256(self.fingerprint().encode("ascii"))
        digest.update(b"\0" + (self.resolved_cwd(working_dir) or "").encode("utf-8"))
        for name, value in (*self.client_env, *self.client_headers):
            digest.update(b"\0" + name.encode("utf-8") + b"=" + value.encode("utf-8"))
        return digest.hexdigest()

    def resolved_cwd(self, working_dir: str | None) -> str | None:
        """The server's working directory (stdio): its ``cwd`` against the workspace."""
        if self.transport != "stdio":
            return None
        base = self.workspace if self.origin == "project" else working_dir
        configured = self.config.cwd
        if configured is None:
            return base
        expanded = os.path.expanduser(configured)
        if os.path.isabs(expanded) or base is None:
            return os.path.normpath(expanded)
        return os.path.normpath(os.path.join(base, expanded))

    def describe(self) -> str:
        """The command line or URL, for approval previews and doctor (no secrets)."""
        if self.config.command is not None:
            return shlex.join([self.config.command, *self.config.args])
        return str(self.config.url)

    def host(self) -> str | None:
        """``host[:port]`` of an HTTP server."""
        url = self.config.url
        if url is None or url.host is None:
            return None
        default_port = {"http": 80, "https": 443}.get(url.scheme)
        return url.host if url.port in (None, default_port) else f"{url.host}:{url.port}"


def merge_servers(
    user: McpConfig,
    project: McpConfig,
    *,
    workspace: str | None,
    user_file: str | None,
    project_file: str | None,
) -> dict[str, ServerDefinition]:
    """The servers a workspace may use: the user's, plus the project's other names."""
    servers = {
        name: ServerDefinition(name=name, origin="user", config=config, source=user_file)
        for name, config in user.servers.items()
    }
    for name, config in project.servers.items():
        if name in servers:
            _log.warning(
                "%s declares MCP server %r, which your own config.toml also declares; using yours",
                project_file,
                name,
            )
            continue
        if config.auto_approve_read_only:
            _log.warning(
                "%s sets auto_approve_read_only for MCP server %r; ignored (only your own "
                "config.toml may switch approvals off)",
                project_file,
                name,
            )
            config = config.model_copy(update={"auto_approve_read_only": False})
        servers[name] = ServerDefinition(
            name=name, origin="project", config=config, workspace=workspace, source=project_file
        )
    return servers


def enabled(servers: Mapping[str, ServerDefinition]) -> dict[str, ServerDefinition]:
    """Only the servers whose ``enabled`` is on."""
    return {name: server for name, server in servers.items() if server.config.enabled}
