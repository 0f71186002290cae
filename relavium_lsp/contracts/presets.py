"""Presets for common providers, so a provider needs one line of config.

``[providers.ollama]`` alone (or ``preset = "ollama"`` under any id) gives the adapter kind,
the base URL the server listens on by default, and — for servers that run on this machine —
``allow_local_endpoint``. Any field set explicitly wins over the preset's. The cloud
platforms' presets leave the endpoint to the platform's own settings (an Azure resource's
``base_url``, a Bedrock or Vertex ``region``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProviderPreset:
    """What a preset fills in, and whether the server normally wants an API key."""

    base_url: str | None
    needs_key: bool
    local: bool
    label: str
    kind: str = "openai"
    api: str | None = None


PROVIDER_PRESETS: dict[str, ProviderPreset] = {
    # Servers people run on their own machine (keyless unless started with a key).
    "ollama": ProviderPreset("http://127.0.0.1:11434/v1", False, True, "Ollama"),
    "llamacpp": ProviderPreset("http://127.0.0.1:8080/v1", False, True, "llama.cpp server"),
    "vllm": ProviderPreset("http://127.0.0.1:8000/v1", False, True, "vLLM"),
    "lmstudio": ProviderPreset("http://127.0.0.1:1234/v1", False, True, "LM Studio"),
    "localai": ProviderPreset("http://127.0.0.1:8080/v1", False, True, "LocalAI"),
    # Hosted OpenAI-compatible APIs (a key is required).
    "openrouter": ProviderPreset("https://openrouter.ai/api/v1", True, False, "OpenRouter"),
    "groq": ProviderPreset("https://api.groq.com/openai/v1", True, False, "Groq"),
    "deepseek": ProviderPreset("https://api.deepseek.com/v1", True, False, "DeepSeek"),
    "mistral": ProviderPreset("https://api.mistral.ai/v1", True, False, "Mistral"),
    "together": ProviderPreset("https://api.together.xyz/v1", True, False, "Together AI"),
    "fireworks": ProviderPreset(
        "https://api.fireworks.ai/inference/v1", True, False, "Fireworks AI"
    ),
    "xai": ProviderPreset("https://api.x.ai/v1", True, False, "xAI"),
    "cerebras": ProviderPreset("https://api.cerebras.ai/v1", True, False, "Cerebras"),
    "perplexity": ProviderPreset("https://api.perplexity.ai", True, False, "Perplexity"),
    "moonshot": ProviderPreset("https://api.moonshot.ai/v1", True, False, "Moonshot AI"),
    # OpenAI's newest API (reasoning carried between tool calls; codex models need it).
    "openai-responses": ProviderPreset(
        "https://api.openai.com/v1", True, False, "OpenAI (Responses API)", api="responses"
    ),
    # Cloud platforms: their own wire formats and credentials (docs/design.md §5).
    "azure": ProviderPreset(None, True, False, "Azure OpenAI", kind="azure"),
    "gemini": ProviderPreset(
        "https://generativelanguage.googleapis.com/v1beta",
        True,
        False,
        "Google Gemini",
        kind="gemini",
    ),
    "vertex": ProviderPreset(None, False, False, "Google Vertex AI", kind="vertex"),
    "bedrock": ProviderPreset(None, False, False, "Amazon Bedrock", kind="bedrock"),
}
