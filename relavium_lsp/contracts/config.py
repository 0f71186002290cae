"""Configuration contracts (``docs/design.md`` §8): project ``[chat]``, providers, preferences.

Files are parsed by :mod:`relavium_lsp.config`; these models are what they must contain.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, HttpUrl, field_validator

from relavium_lsp.contracts.base import AuthoredModel
from relavium_lsp.contracts.delegation import DelegationConfig
from relavium_lsp.contracts.introspection_config import IntrospectionConfig
from relavium_lsp.contracts.mcp import McpConfig
from relavium_lsp.contracts.peers_config import PeersConfig
from relavium_lsp.contracts.presets import PROVIDER_PRESETS
from relavium_lsp.contracts.session import FsScopeTier

ApprovalMode = Literal["ask", "auto_edits", "never_ask"]
OnExceed = Literal["fail", "pause_for_approval", "warn"]
ProviderKind = Literal["openai", "anthropic", "cassette", "azure", "gemini", "vertex", "bedrock"]
# openai / azure: Chat Completions (default) or the Responses API; bedrock: Converse or
# Claude's Messages API (default: Messages for Claude models, Converse for the rest).
ProviderApi = Literal["chat", "responses", "converse", "messages"]
AzureAuth = Literal["api-key", "entra-id"]

DEFAULT_MAX_TURNS = 50
DEFAULT_MAX_TOOL_TURNS = 25


class ChatConfig(AuthoredModel):
    """The ``[chat]`` block. Every field is optional so layers can be merged per field."""

    default_model: str | None = None
    fs_scope: FsScopeTier | None = None
    # 0 means "the default" like an absent key (seed 000: 0/absent ⇒ the default); a
    # negative count is an error that names the file and line.
    max_turns: int | None = Field(default=None, ge=0, le=10_000)
    max_tool_turns: int | None = Field(default=None, ge=1, le=1_000)
    max_messages: int | None = Field(default=None, ge=4)
    auto_compact: bool | None = None
    compact_threshold: float | None = Field(default=None, gt=0, le=1)
    max_cost_microcents: int | None = Field(default=None, ge=0)
    on_exceed: OnExceed | None = None
    allowed_commands: list[str] | None = None
    allowed_command_globs: list[str] | None = None
    allowed_domains: list[str] | None = None
    allowed_paths: list[str] | None = None
    approval: ApprovalMode | None = None
    approval_timeout_s: float | None = Field(default=None, gt=0, le=86_400)
    disk_write_fallback: bool | None = None
    # Extra protected-file globs (writes always ask); added to the built-in list, never
    # replacing it. Both files' lists count: protecting more is never looser.
    protected_paths: list[str] | None = None

    @field_validator("max_turns")
    @classmethod
    def _zero_turns_is_the_default(cls, value: int | None) -> int | None:
        return None if value == 0 else value


class ProviderConfig(AuthoredModel):
    """One ``[providers.<id>]`` entry (see :mod:`relavium_lsp.contracts.presets`)."""

    preset: str | None = None
    kind: ProviderKind | None = None
    base_url: HttpUrl | None = None
    allow_local_endpoint: bool = False
    timeout_s: float = Field(default=120.0, gt=0, le=3_600)
    context_window: int | None = Field(default=None, ge=1_024)
    cassette: str | None = None
    # Anthropic, Bedrock and Vertex Claude: place cache breakpoints (history is billed at
    # cache rates).
    prompt_caching: bool = True
    # Cloud platforms (docs/design.md §5): which API, and where the credentials are.
    api: ProviderApi | None = None
    api_version: str | None = Field(default=None, min_length=1, max_length=64)  # Azure
    auth: AzureAuth | None = None  # Azure: the key is an api-key, or use Entra ID
    region: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9-]{1,40}$")
    project: str | None = Field(default=None, min_length=1, max_length=100)  # Vertex
    profile: str | None = Field(default=None, min_length=1, max_length=128)  # AWS profile
    credentials_file: str | None = None  # Vertex: a Google credentials file

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, value: str | None) -> str | None:
        if value is not None and value not in PROVIDER_PRESETS:
            known = ", ".join(sorted(PROVIDER_PRESETS))
            raise ValueError(f"unknown preset {value!r}; known presets: {known}")
        return value


class Preferences(AuthoredModel):
    """The global ``[preferences]`` block."""

    default_model: str | None = None


class GlobalConfigFile(AuthoredModel):
    """``~/.relavium/config.toml``."""

    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    preferences: Preferences = Field(default_factory=Preferences)
    chat: ChatConfig = Field(default_factory=ChatConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    delegation: DelegationConfig = Field(default_factory=DelegationConfig)
    introspection: IntrospectionConfig = Field(default_factory=IntrospectionConfig)
    peers: PeersConfig = Field(default_factory=PeersConfig)


class ProjectConfigFile(AuthoredModel):
    """``<workspace>/.relavium/project.toml``."""

    chat: ChatConfig = Field(default_factory=ChatConfig)
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    mcp: McpConfig = Field(default_factory=McpConfig)
    delegation: DelegationConfig = Field(default_factory=DelegationConfig)
    introspection: IntrospectionConfig = Field(default_factory=IntrospectionConfig)
    peers: PeersConfig = Field(default_factory=PeersConfig)


class EffectiveChatPolicy(AuthoredModel):
    """The merged ``[chat]`` values with every default filled in: what the engine obeys."""

    default_model: str | None = None
    fs_scope: FsScopeTier = "sandboxed"
    max_turns: int = DEFAULT_MAX_TURNS
    max_tool_turns: int = DEFAULT_MAX_TOOL_TURNS
    max_messages: int | None = None
    auto_compact: bool = True
    compact_threshold: float = 0.8
    max_cost_microcents: int | None = None
    on_exceed: OnExceed = "fail"
    allowed_commands: list[str] = Field(default_factory=list)
    allowed_command_globs: list[str] = Field(default_factory=list)
    allowed_domains: list[str] = Field(default_factory=list)
    allowed_paths: list[str] = Field(default_factory=list)
    approval: ApprovalMode = "ask"
    approval_timeout_s: float = 300.0
    disk_write_fallback: bool = False
    protected_paths: list[str] = Field(default_factory=list)
