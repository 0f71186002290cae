"""What we know about common models: price, context window, output limit.

Prices are integers in **micro-cents per million tokens** (1 USD = 100 cents =
100,000,000 micro-cents; so "$2.50 per million tokens" is ``250_000_000``). They are list
prices for standard (non-batch, non-cached) input and output tokens as published by the
vendors. Prompt-cache tokens have their own rates: a cache *read* costs a fraction of the
input price (OpenAI's "cached input"; Anthropic's "cache hits"), and a cache *write* costs
more than input at Anthropic (5-minute writes are 1.25x input) and the input price at OpenAI,
which does not charge for writing its automatic cache.

Lookups normalise a model reference: lower case, an optional ``provider/`` prefix and a
dated or ``-latest`` suffix are ignored (``openai/gpt-4o-2024-08-06`` → ``gpt-4o``), and so
are the cloud platforms' spellings of the same model: Bedrock's inference-profile region,
vendor and version (``us.anthropic.claude-sonnet-4-5-20250929-v1:0`` → ``claude-sonnet-4-5``)
and Vertex's ``@date`` (``claude-sonnet-4-5@20250929``). There is no prefix matching —
``gpt-4o-mini`` must never be priced as ``gpt-4o``. Prices are the platforms' standard list
prices (Bedrock's regional inference profiles can cost 10 % more; Gemini 2.5 Pro's prompts
over 200k tokens cost more — the catalog holds the standard tier).

``api`` names the API a model needs when it is not the provider's usual one: OpenAI's
``codex`` and ``-pro`` models are served only through the Responses API.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from relavium_lsp.contracts.agent import OFFLINE_MODEL_ID

MICROCENTS_PER_USD = 100_000_000
_RESPONSES = "responses"
# Conservative defaults for models we do not know (local models are often run with 8k).
DEFAULT_CONTEXT_WINDOW = 8_192
DEFAULT_MAX_OUTPUT_TOKENS = 4_096


@dataclass(frozen=True)
class ModelInfo:
    """Catalog facts for one model (cache rates default to the input rate)."""

    input_microcents_per_mtok: int
    output_microcents_per_mtok: int
    context_window: int
    max_output_tokens: int
    cache_read_microcents_per_mtok: int
    cache_write_microcents_per_mtok: int
    api: str | None = None


def _usd(per_million: str) -> int:
    return int(Decimal(per_million) * MICROCENTS_PER_USD)


def _model(
    input_usd: str,
    output_usd: str,
    window: int,
    max_output: int,
    *,
    cached_usd: str | None = None,
    write_usd: str | None = None,
    api: str | None = None,
) -> ModelInfo:
    return ModelInfo(
        _usd(input_usd),
        _usd(output_usd),
        window,
        max_output,
        _usd(cached_usd if cached_usd is not None else input_usd),
        _usd(write_usd if write_usd is not None else input_usd),
        api,
    )


def _claude(input_usd: str, output_usd: str, max_output: int) -> ModelInfo:
    # Anthropic: cache hits are 0.1x input, 5-minute cache writes 1.25x input.
    price = Decimal(input_usd)
    return _model(
        input_usd,
        output_usd,
        200_000,
        max_output,
        cached_usd=str(price / 10),
        write_usd=str(price * Decimal("1.25")),
    )


MODELS: dict[str, ModelInfo] = {
    # OpenAI (cached_usd: the "cached input" price; writing the cache costs plain input)
    "gpt-5": _model("1.25", "10.00", 400_000, 128_000, cached_usd="0.125"),
    "gpt-5-mini": _model("0.25", "2.00", 400_000, 128_000, cached_usd="0.025"),
    "gpt-5-nano": _model("0.05", "0.40", 400_000, 128_000, cached_usd="0.005"),
    "gpt-4.1": _model("2.00", "8.00", 1_047_576, 32_768, cached_usd="0.50"),
    "gpt-4.1-mini": _model("0.40", "1.60", 1_047_576, 32_768, cached_usd="0.10"),
    "gpt-4.1-nano": _model("0.10", "0.40", 1_047_576, 32_768, cached_usd="0.025"),
    "gpt-4o": _model("2.50", "10.00", 128_000, 16_384, cached_usd="1.25"),
    "gpt-4o-mini": _model("0.15", "0.60", 128_000, 16_384, cached_usd="0.075"),
    "gpt-4-turbo": _model("10.00", "30.00", 128_000, 4_096),
    "gpt-3.5-turbo": _model("0.50", "1.50", 16_385, 4_096),
    "o1": _model("15.00", "60.00", 200_000, 100_000, cached_usd="7.50"),
    "o1-mini": _model("1.10", "4.40", 128_000, 65_536, cached_usd="0.55"),
    "o3": _model("2.00", "8.00", 200_000, 100_000, cached_usd="0.50"),
    "o3-mini": _model("1.10", "4.40", 200_000, 100_000, cached_usd="0.55"),
    "o4-mini": _model("1.10", "4.40", 200_000, 100_000, cached_usd="0.275"),
    "gpt-5.1": _model("1.25", "10.00", 400_000, 128_000, cached_usd="0.125"),
    # Served only through the Responses API.
    "gpt-5-codex": _model("1.25", "10.00", 400_000, 128_000, cached_usd="0.125", api=_RESPONSES),
    "gpt-5.1-codex": _model("1.25", "10.00", 400_000, 128_000, cached_usd="0.125", api=_RESPONSES),
    "gpt-5.1-codex-mini": _model(
        "0.25", "2.00", 400_000, 128_000, cached_usd="0.025", api=_RESPONSES
    ),
    "codex-mini": _model("1.50", "6.00", 200_000, 100_000, cached_usd="0.375", api=_RESPONSES),
    "gpt-5-pro": _model("15.00", "120.00", 400_000, 272_000, api=_RESPONSES),
    "o3-pro": _model("20.00", "80.00", 200_000, 100_000, api=_RESPONSES),
    "o1-pro": _model("150.00", "600.00", 200_000, 100_000, api=_RESPONSES),
    # Google Gemini (Gemini API and Vertex AI list prices; prompts up to 200k tokens).
    # Implicit caching bills cached prompt tokens at the cached rate.
    "gemini-3-pro-preview": _model("2.00", "12.00", 1_048_576, 65_536, cached_usd="0.20"),
    "gemini-2.5-pro": _model("1.25", "10.00", 1_048_576, 65_536, cached_usd="0.125"),
    "gemini-2.5-flash": _model("0.30", "2.50", 1_048_576, 65_536, cached_usd="0.03"),
    "gemini-2.5-flash-lite": _model("0.10", "0.40", 1_048_576, 65_536, cached_usd="0.01"),
    "gemini-2.0-flash": _model("0.10", "0.40", 1_048_576, 8_192, cached_usd="0.025"),
    "gemini-2.0-flash-lite": _model("0.075", "0.30", 1_048_576, 8_192),
    # Amazon Nova on Bedrock (cache reads at a quarter of input).
    "nova-premier": _model("2.50", "12.50", 1_000_000, 32_000, cached_usd="0.625"),
    "nova-pro": _model("0.80", "3.20", 300_000, 10_000, cached_usd="0.20"),
    "nova-lite": _model("0.06", "0.24", 300_000, 10_000, cached_usd="0.015"),
    "nova-micro": _model("0.035", "0.14", 128_000, 10_000, cached_usd="0.00875"),
    # Anthropic
    "claude-opus-4-5": _claude("5.00", "25.00", 64_000),
    "claude-sonnet-4-5": _claude("3.00", "15.00", 64_000),
    "claude-haiku-4-5": _claude("1.00", "5.00", 64_000),
    "claude-opus-4-1": _claude("15.00", "75.00", 32_000),
    "claude-opus-4": _claude("15.00", "75.00", 32_000),
    "claude-sonnet-4": _claude("3.00", "15.00", 64_000),
    "claude-3-7-sonnet": _claude("3.00", "15.00", 64_000),
    "claude-3-5-sonnet": _claude("3.00", "15.00", 8_192),
    "claude-3-5-haiku": _claude("0.80", "4.00", 8_192),
    "claude-3-opus": _claude("15.00", "75.00", 4_096),
    # Haiku 3 is the exception to the 0.1x / 1.25x rule: $0.03 hits, $0.30 writes.
    "claude-3-haiku": _model("0.25", "1.25", 200_000, 4_096, cached_usd="0.03", write_usd="0.30"),
    # The bundled offline demo model answers from a cassette: it truly costs nothing.
    OFFLINE_MODEL_ID: _model("0", "0", 200_000, 4_096),
}

_ALIASES = {
    "claude-opus-4-0": "claude-opus-4",
    "claude-sonnet-4-0": "claude-sonnet-4",
}
_SUFFIX = re.compile(r"-(?:latest|\d{8}|\d{4}-\d{2}-\d{2})$")
# Bedrock: an inference profile's geography, the vendor, and the model version.
_BEDROCK_PREFIX = re.compile(
    r"^(?:(?:us|eu|apac|au|ca|jp|us-gov|global)\.)?(?:anthropic|amazon|meta|mistral|cohere|deepseek)\."
)
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")
_VERTEX_VERSION = re.compile(r"@(?:\d{8}|latest|default)$")


def normalize_model(model: str) -> str:
    """The catalog key a model reference would use (it may still be unknown)."""
    name = model.strip().lower()
    if name not in MODELS and "/" in name:
        name = name.rsplit("/", 1)[1]
    name = _VERTEX_VERSION.sub("", _BEDROCK_VERSION.sub("", _BEDROCK_PREFIX.sub("", name)))
    name = _SUFFIX.sub("", name)
    return _ALIASES.get(name, name)


def api_for(model: str) -> str | None:
    """The API ``model`` needs when it is not the provider's usual one (``responses``)."""
    info = model_info(model)
    return None if info is None else info.api


def model_info(model: str) -> ModelInfo | None:
    """Catalog facts, or ``None`` for a model we do not know."""
    return MODELS.get(normalize_model(model))


def context_window_for(model: str) -> int:
    """The model's context window in tokens; conservative (8,192) when unknown."""
    info = model_info(model)
    return DEFAULT_CONTEXT_WINDOW if info is None else info.context_window


def max_output_tokens_for(model: str) -> int:
    """The model's output limit; 4,096 when unknown (valid for every Claude model)."""
    info = model_info(model)
    return DEFAULT_MAX_OUTPUT_TOKENS if info is None else info.max_output_tokens
