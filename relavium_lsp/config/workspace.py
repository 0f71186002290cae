"""Everything a session needs to know from configuration files, loaded in one call.

Sources, in increasing precedence: built-in defaults, the global ``<home>/config.toml``, the
workspace's ``.relavium/project.toml``; agents come from ``.relavium/agents/*.agent.yaml``
plus the built-in default agent. A workspace without ``.relavium/`` is perfectly valid.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from relavium_lsp.config.agents import agent_files, load_agents
from relavium_lsp.config.delegation import merge_delegation
from relavium_lsp.config.introspection import merge_introspection
from relavium_lsp.config.locate import KeyPath
from relavium_lsp.config.mcp_servers import ServerDefinition, merge_servers
from relavium_lsp.config.merge import merge_policy, merge_providers, resolve_default_model
from relavium_lsp.config.peers import merge_peers
from relavium_lsp.config.toml_files import load_toml_model
from relavium_lsp.contracts.agent import DEFAULT_AGENT, AgentDefinition
from relavium_lsp.contracts.config import (
    EffectiveChatPolicy,
    GlobalConfigFile,
    ProjectConfigFile,
    ProviderConfig,
)
from relavium_lsp.contracts.delegation import EffectiveDelegation
from relavium_lsp.contracts.introspection_config import EffectiveIntrospection
from relavium_lsp.contracts.peers_config import PeerLimits
from relavium_lsp.contracts.presets import PROVIDER_PRESETS
from relavium_lsp.errors import ConfigError
from relavium_lsp.paths import global_config_path, relavium_home

PROJECT_DIR_NAME = ".relavium"
PROJECT_CONFIG_NAME = "project.toml"
AGENTS_DIR_NAME = "agents"
# Fields that choose where a provider's calls go or whose credentials they carry: a provider a
# project file sets any of them for gets no stored key and no cloud credentials (§10).
ENDPOINT_FIELDS = frozenset(
    {
        "preset",
        "kind",
        "base_url",
        "allow_local_endpoint",
        "cassette",
        "auth",
        "profile",
        "credentials_file",
    }
)


@dataclass(frozen=True)
class WorkspaceConfig:
    """The merged configuration of one workspace (or of none: global + defaults)."""

    agents: dict[str, AgentDefinition]
    policy: EffectiveChatPolicy
    providers: dict[str, ProviderConfig]
    default_model: str | None
    sources: tuple[Path, ...] = field(default=())
    # Providers whose endpoint a project file chose: they never receive a stored API key,
    # so a cloned repository cannot point the user's key at a server of its choosing.
    keyless_providers: frozenset[str] = field(default=frozenset())
    # MCP servers by name, from both files (see relavium_lsp.config.mcp_servers).
    mcp_servers: dict[str, ServerDefinition] = field(default_factory=dict)
    # The [delegation] limits (docs/design.md §2.5).
    delegation: EffectiveDelegation = field(default_factory=EffectiveDelegation)
    # When introspection passes run by themselves (relavium_lsp.config.introspection).
    introspection: EffectiveIntrospection = field(default_factory=EffectiveIntrospection)
    # The [peers] caps on peer messages (relavium_lsp.config.peers).
    peers: PeerLimits = field(default_factory=PeerLimits)


def load_workspace_config(workspace: Path | None, home: Path | None = None) -> WorkspaceConfig:
    """Load and merge configuration for ``workspace``; any invalid file is a ``ConfigError``.

    Read again whenever a file it is made of changed (edits take effect on the next use), but
    parsed only then: the engine asks on every turn, and parsing the TOML and the agents'
    YAML then competed with the next turn's start (issue 25). A file's bytes decide whether
    it changed, not its timestamp (two saves within one clock tick keep the same one).
    """
    global_path = global_config_path(home if home is not None else relavium_home())
    key = (
        str(workspace) if workspace is not None else None,
        os.path.realpath(workspace) if workspace is not None else None,
        str(global_path),
    )
    fingerprint = _fingerprint(workspace, global_path)
    with _PARSED_LOCK:
        known = _PARSED.get(key)
        if known is not None and known[0] == fingerprint:
            _PARSED.move_to_end(key)
            return known[1]
    config = _parse_workspace_config(workspace, global_path)
    with _PARSED_LOCK:
        # Fingerprinted before parsing: a file changed meanwhile is parsed again next time.
        _PARSED[key] = (fingerprint, config)
        while len(_PARSED) > MAX_PARSED_WORKSPACES:
            _PARSED.popitem(last=False)
    return config


# The files' state: (path, kind, digest of the bytes) for every file and directory the
# configuration is read from, missing ones included (creating one changes the state).
_Fingerprint = tuple[tuple[str, str, bytes], ...]
MAX_PARSED_WORKSPACES = 16
_PARSED: OrderedDict[tuple[str | None, str | None, str], tuple[_Fingerprint, WorkspaceConfig]] = (
    OrderedDict()
)
# Loaded on worker threads (asyncio.to_thread), several at once.
_PARSED_LOCK = threading.Lock()


def _fingerprint(workspace: Path | None, global_path: Path) -> _Fingerprint:
    paths = [global_path]
    if workspace is not None:
        project_dir = workspace / PROJECT_DIR_NAME
        paths += [project_dir, project_dir / PROJECT_CONFIG_NAME]
        agents_dir = project_dir / AGENTS_DIR_NAME
        paths.append(agents_dir)
        paths += agent_files(agents_dir)
    return tuple(_file_state(path) for path in paths)


def _file_state(path: Path) -> tuple[str, str, bytes]:
    if path.is_dir():
        return (str(path), "dir", b"")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return (str(path), "missing", b"")
    except OSError:
        return (str(path), "unreadable", b"")  # parsing reports it (and is not cached)
    return (str(path), "file", hashlib.blake2b(data, digest_size=16).digest())


def _parse_workspace_config(workspace: Path | None, global_path: Path) -> WorkspaceConfig:
    sources: list[Path] = []
    global_file = GlobalConfigFile()
    global_lines: dict[KeyPath, int] = {}
    if global_path.exists():
        global_file, global_lines = load_toml_model(global_path, GlobalConfigFile)
        sources.append(global_path)

    project_file = ProjectConfigFile()
    project_lines: dict[KeyPath, int] = {}
    project_path: Path | None = None
    files: list[Path] = []
    if workspace is not None:
        project_dir = workspace / PROJECT_DIR_NAME
        if project_dir.exists() and not project_dir.is_dir():
            raise ConfigError("is not a directory", file=str(project_dir))
        project_path = project_dir / PROJECT_CONFIG_NAME
        if project_path.exists():
            project_file, project_lines = load_toml_model(project_path, ProjectConfigFile)
            sources.append(project_path)
        files = agent_files(project_dir / AGENTS_DIR_NAME)
        sources.extend(files)

    default_model = resolve_default_model(global_file, project_file)
    providers = merge_providers(global_file.providers, project_file.providers)
    for provider_id, provider in providers.items():
        if provider.kind is None:
            in_project = provider_id in project_file.providers and project_path is not None
            where, lines = (
                (project_path, project_lines) if in_project else (global_path, global_lines)
            )
            raise _missing_kind(provider_id, where or global_path, lines)

    agents: dict[str, AgentDefinition] = {}
    loaded = load_agents(files)
    if DEFAULT_AGENT.id not in loaded:
        agents[DEFAULT_AGENT.id] = DEFAULT_AGENT
    agents.update({agent_id: agent for agent_id, (agent, _) in sorted(loaded.items())})

    return WorkspaceConfig(
        agents=agents,
        policy=merge_policy(global_file.chat, project_file.chat, default_model=default_model),
        providers=providers,
        default_model=default_model,
        sources=tuple(sources),
        keyless_providers=frozenset(
            provider_id
            for provider_id, provider in project_file.providers.items()
            if provider.model_fields_set & ENDPOINT_FIELDS
        ),
        mcp_servers=merge_servers(
            global_file.mcp,
            project_file.mcp,
            workspace=os.path.realpath(workspace) if workspace is not None else None,
            user_file=str(global_path),
            project_file=str(project_path) if project_path is not None else None,
        ),
        delegation=merge_delegation(global_file.delegation, project_file.delegation),
        introspection=merge_introspection(global_file.introspection, project_file.introspection),
        peers=merge_peers(global_file.peers, project_file.peers),
    )


def _missing_kind(provider_id: str, file: Path, lines: dict[KeyPath, int]) -> ConfigError:
    line = lines.get(("providers", provider_id))
    return ConfigError(
        'a provider needs kind = "openai", "anthropic", "azure", "gemini", "vertex", '
        '"bedrock" or "cassette", or a preset '
        f'(preset = "ollama", or name it after one: {", ".join(sorted(PROVIDER_PRESETS))})',
        file=str(file),
        line=line,
        field=f"providers.{provider_id}.kind",
    )
