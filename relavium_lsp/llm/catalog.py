"""What we know about common models: price, context window, output limit.

Prices are integers in **micro-cents per million tokens** (1 USD = 100 cents =
100,000,000 micro-cents; so "$2.50 per million tokens" is ``250_000_000``). They are list
prices for standard (non-batch, non-cached) input and output tokens as published by the
vendors. Prompt-cache tokens have their own rates: a cache *read* costs a fraction of the
input price (OpenAI's "cached input"; Anthropic's "cache hits"), and a cache *write* costs
more than input at Anthropic (5-minute writes are 1.25x input) and the input price at OpenAI,
which does not charge for writing its automatic cache.

Lookups normalise a model reference: lower case, an optional ``provider/`` prefix and a
dated or ``-latest`` suffix are ignored (``openai/gpt-4o-2024-08-06`` → ``gpt-4o``). There
is no prefix matching — ``gpt-4o-mini`` must never be priced as ``gpt-4o``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from relavium_lsp.contracts.agent import OFFLINE_MODEL_ID

MICROCENTS_PER_USD = 100_000_000
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
) -> ModelInfo:
    return ModelInfo(
        _usd(input_usd),
        _usd(output_usd),
        window,
        max_output,
        _usd(cached_usd if cached_usd is not None else input_usd),
        _usd(write_usd if write_usd is not None else input_usd),
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


def normalize_model(model: str) -> str:
    """The catalog key a model reference would use (it may still be unknown)."""
    name = model.strip().lower()
    if name not in MODELS and "/" in name:
        name = name.rsplit("/", 1)[1]
    name = _SUFFIX.sub("", name)
    return _ALIASES.get(name, name)


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
