"""Setting up a model from the editor: the provider presets offered and the setup request.

``relavium/listProviderPresets`` lists what a "Set up a model" picker offers (the hosted
``openai`` and ``anthropic`` providers, then every preset of
:data:`~relavium_lsp.contracts.presets.PROVIDER_PRESETS`); ``relavium/setupModel`` stores the
key in the OS keychain, writes ``default_model`` (and the provider's block) into the user's
``config.toml`` and checks the provider (``docs/design.md`` §8.1). The API key is a request
param only: no result, event, log line or error carries it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from relavium_lsp.contracts.base import WireModel

# Where ``relavium/setupModel`` put the key: the OS keychain, a keyring backend that keeps
# keys in a file (one the user chose explicitly, e.g. keyrings.alt), or nowhere (no key given,
# or no keychain to keep it: then the check says which environment variable to set).
KeyStorage = Literal["keychain", "file", "none"]

# Models a setup picker suggests per provider id (the user may type any other). A preset
# missing here simply suggests nothing.
SUGGESTED_MODELS: dict[str, tuple[str, ...]] = {
    "openai": ("gpt-5-mini", "gpt-5", "gpt-4.1", "gpt-4o-mini"),
    "anthropic": ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-5"),
    "ollama": ("qwen2.5-coder", "llama3.1", "gpt-oss:20b"),
    "openrouter": ("anthropic/claude-sonnet-4.5", "openai/gpt-5-mini"),
    "groq": ("llama-3.3-70b-versatile", "openai/gpt-oss-120b"),
    "deepseek": ("deepseek-chat", "deepseek-reasoner"),
    "mistral": ("devstral-medium-latest", "mistral-large-latest"),
    "xai": ("grok-4", "grok-code-fast-1"),
    "openai-responses": ("gpt-5-codex", "gpt-5"),
    "gemini": ("gemini-2.5-pro", "gemini-2.5-flash"),
    "vertex": ("gemini-2.5-pro", "claude-sonnet-4-5@20250929"),
    "bedrock": ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "amazon.nova-pro-v1:0"),
}


class ProviderPresetInfo(WireModel):
    """One provider a setup picker offers."""

    # The provider id written to ``config.toml`` (and the keychain account of its key).
    id: str
    label: str
    # The adapter (``openai`` = any OpenAI-compatible Chat Completions server).
    kind: str
    needs_key: bool
    # A server that normally runs on this machine (Ollama, llama.cpp, …).
    local: bool
    base_url: str | None = None
    suggested_models: list[str] = Field(default_factory=list)


class ListProviderPresetsResult(WireModel):
    """``relavium/listProviderPresets``: hosted providers first, then the presets."""

    presets: list[ProviderPresetInfo]


class SetupModelParams(WireModel):
    """``relavium/setupModel``: use ``model`` of provider ``preset`` as the default model."""

    preset: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    model: str = Field(min_length=1, max_length=200, pattern=r"^\S+$")
    # Stored in the OS keychain, never written anywhere else; omitted: keep the stored one.
    api_key: str | None = Field(
        default=None, min_length=1, max_length=4096, pattern=r"^\S+$", repr=False
    )
    # Only for a server somewhere else than the preset's address (``base_url``).
    base_url: str | None = Field(default=None, max_length=2048, pattern=r"^https?://\S+$")


class SetupCheck(WireModel):
    """The provider check run after the setup (what ``relavium-lsp doctor`` says of it)."""

    ok: bool
    message: str


class SetupModelResult(WireModel):
    """What ``relavium/setupModel`` did."""

    # What the user config now says (``provider/model``).
    default_model: str
    config_path: str
    key_stored: KeyStorage
    check: SetupCheck
