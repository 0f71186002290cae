"""Presets for common OpenAI-compatible servers, so a provider needs one line of config.

``[providers.ollama]`` alone (or ``preset = "ollama"`` under any id) gives the adapter kind,
the base URL the server listens on by default, and — for servers that run on this machine —
``allow_local_endpoint``. Any field set explicitly wins over the preset's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProviderPreset:
    """What a preset fills in, and whether the server normally wants an API key."""

    base_url: str
    needs_key: bool
    local: bool
    label: str
    kind: str = "openai"


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
}
