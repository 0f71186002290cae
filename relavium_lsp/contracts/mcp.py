"""The ``[mcp.servers.NAME]`` configuration contract: MCP tool servers (design.md §6.1, §8).

A server is either a local process spoken to over stdio (``command``, ``args``, ``env``,
``cwd``) or a Streamable HTTP endpoint (``url``, ``headers``). Secrets never sit in a config
file: an HTTP header value must be a keychain reference (``{ keychain = "name" }``, the
secret stored with ``relavium-lsp keys set name``), and an environment value may be one.

.. code-block:: toml

    [mcp.servers.time]
    command = "mcp-server-time"
    args = ["--local-timezone", "Europe/Paris"]
    auto_approve_read_only = true     # user config only: readOnlyHint tools run unasked

    [mcp.servers.tracker]
    url = "https://mcp.example.com/mcp"
    headers = { Authorization = { keychain = "tracker-token", prefix = "Bearer " } }

Tools of a server are namespaced ``mcp__SERVER__TOOL`` (:func:`exposed_name`). Server names
never contain ``__``, so the first ``__`` after the prefix ends the server name. A tool name
outside ``[A-Za-z0-9_-]``, or one too long for the 64 characters providers accept, is cut and
suffixed with a short hash of the original so two such names never collide.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from pydantic import Field, HttpUrl, field_validator, model_validator

from relavium_lsp.contracts.base import AuthoredModel

# Lowercase words joined by single ``-`` or ``_``: never ``__``, which separates the parts of
# a namespaced tool name (``mcp__NAME__tool``).
SERVER_NAME_PATTERN = r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$"
SERVER_NAME_MAX = 32
KEYCHAIN_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
HEADER_NAME_PATTERN = r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$"
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,100}$"
DEFAULT_CALL_TIMEOUT_S = 60.0
DEFAULT_STARTUP_TIMEOUT_S = 30.0
_LITERAL_NOT_ALLOWED = (
    'must be a keychain reference such as {{ keychain = "name" }} (store the secret with '
    "`relavium-lsp keys set name`); literal values are not allowed for {what}"
)


class KeychainRef(AuthoredModel):
    """A secret kept in the OS keychain (service ``relavium``, account ``keychain``)."""

    keychain: str = Field(pattern=KEYCHAIN_NAME_PATTERN)
    # Put before the secret, e.g. "Bearer " for an Authorization header.
    prefix: str = Field(default="", max_length=40)


class McpServerConfig(AuthoredModel):
    """One ``[mcp.servers.NAME]`` table."""

    command: str | None = Field(default=None, min_length=1, max_length=4096)
    args: list[str] = Field(default_factory=list, max_length=256)
    env: dict[str, str | KeychainRef] = Field(default_factory=dict)
    cwd: str | None = Field(default=None, min_length=1, max_length=4096)
    url: HttpUrl | None = None
    headers: dict[str, KeychainRef] = Field(default_factory=dict)
    timeout_s: float = Field(default=DEFAULT_CALL_TIMEOUT_S, gt=0, le=3_600)
    startup_timeout_s: float = Field(default=DEFAULT_STARTUP_TIMEOUT_S, gt=0, le=600)
    # Tools the server marks readOnlyHint run without asking. Honoured in the user's own
    # config only: a project file cannot switch approvals off.
    auto_approve_read_only: bool = False
    enabled: bool = True
    # A url on this machine or the local network (loopback, private, link-local) or plain
    # http://: refused by the egress guard unless set, as for providers (issue 35).
    allow_local_endpoint: bool = False

    @field_validator("headers", mode="before")
    @classmethod
    def _headers_are_references(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for name, item in value.items():
                if isinstance(item, str):
                    raise ValueError(
                        f"header {name!r} " + _LITERAL_NOT_ALLOWED.format(what="headers")
                    )
        return value

    @field_validator("headers")
    @classmethod
    def _header_names(cls, value: dict[str, KeychainRef]) -> dict[str, KeychainRef]:
        _check_names(value, HEADER_NAME_PATTERN, "header")
        return value

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, str | KeychainRef]) -> dict[str, str | KeychainRef]:
        _check_names(value, ENV_NAME_PATTERN, "environment variable")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("set either command (a stdio server) or url (Streamable HTTP)")
        if self.url is not None and (self.args or self.env or self.cwd is not None):
            raise ValueError("args, env and cwd apply to stdio servers (command), not url")
        if self.command is not None and (self.headers or self.allow_local_endpoint):
            raise ValueError(
                "headers and allow_local_endpoint apply to Streamable HTTP servers (url), "
                "not command"
            )
        return self


class McpConfig(AuthoredModel):
    """The ``[mcp]`` block."""

    servers: dict[str, McpServerConfig] = Field(default_factory=dict)

    @field_validator("servers")
    @classmethod
    def _server_names(cls, value: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        for name in value:
            if not valid_server_name(name):
                raise ValueError(
                    f"server name {name!r} must be lowercase letters and digits joined by "
                    f"single '-' or '_' (at most {SERVER_NAME_MAX} characters)"
                )
        return value


def valid_server_name(name: str) -> bool:
    """Whether ``name`` may name an MCP server (see :data:`SERVER_NAME_PATTERN`)."""
    return len(name) <= SERVER_NAME_MAX and re.match(SERVER_NAME_PATTERN, name) is not None


def _check_names(value: dict[str, Any], pattern: str, what: str) -> None:
    for name in value:
        if re.match(pattern, name) is None:
            raise ValueError(f"{what} name {name[:100]!r} is not valid")


NAME_PREFIX = "mcp__"
NAME_SEPARATOR = "__"
MAX_TOOL_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def exposed_name(server: str, tool: str) -> str:
    """``mcp__SERVER__TOOL``, made safe for every provider (see the module doc)."""
    safe = _UNSAFE.sub("_", tool)
    name = f"{NAME_PREFIX}{server}{NAME_SEPARATOR}{safe}"
    if safe == tool and len(name) <= MAX_TOOL_NAME:
        return name
    digest = hashlib.sha256(tool.encode("utf-8")).hexdigest()[:6]
    return f"{name[: MAX_TOOL_NAME - 7]}_{digest}"


def split_exposed_name(name: str) -> tuple[str, str] | None:
    """``(server, tool)`` of a namespaced tool name, ``None`` for any other name."""
    if not name.startswith(NAME_PREFIX):
        return None
    server, separator, tool = name[len(NAME_PREFIX) :].partition(NAME_SEPARATOR)
    if not separator or not server or not tool:
        return None
    return server, tool
