from __future__ import annotations

import pytest

from relavium_lsp.contracts.agent import OFFLINE_MODEL_ID
from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.catalog import (
    DEFAULT_CONTEXT_WINDOW,
    MICROCENTS_PER_USD,
    MODELS,
    context_window_for,
    max_output_tokens_for,
    normalize_model,
)
from relavium_lsp.llm.pricing import PricedCall, price_call


def test_unit_is_microcents_per_million_tokens():
    # gpt-4o: $2.50 in / $10.00 out per million tokens.
    assert MODELS["gpt-4o"].input_microcents_per_mtok == 250 * MICROCENTS_PER_USD // 100
    one_million_each = TokenUsage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert price_call("gpt-4o", one_million_each) == PricedCall(
        cost_microcents=12 * MICROCENTS_PER_USD + MICROCENTS_PER_USD // 2, priced=True
    )


def test_small_calls_are_exact_integers():
    # claude-sonnet-4-5: $3 / $15 per million → 300 and 1500 micro-cents per token.
    assert price_call(
        "claude-sonnet-4-5", TokenUsage(input_tokens=1000, output_tokens=200)
    ) == PricedCall(cost_microcents=1000 * 300 + 200 * 1500, priced=True)
    # gpt-4o-mini input is 15 micro-cents per token; $0.075-style prices stay integral per M.
    assert price_call("gpt-4o-mini", TokenUsage(input_tokens=3)).cost_microcents == 45
    assert price_call("gpt-5-nano", TokenUsage(input_tokens=1)).cost_microcents == 5


@pytest.mark.parametrize(
    ("reference", "key"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
        ("claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
        ("anthropic/claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-opus-4-0", "claude-opus-4"),
        ("GPT-4.1", "gpt-4.1"),
    ],
)
def test_references_normalise(reference, key):
    assert normalize_model(reference) == key
    assert price_call(reference, TokenUsage(input_tokens=10)).priced


def test_no_prefix_matching_between_sibling_models():
    assert price_call("gpt-4o-mini", TokenUsage(input_tokens=1_000)) != price_call(
        "gpt-4o", TokenUsage(input_tokens=1_000)
    )


@pytest.mark.parametrize("model", ["llama3.1:8b", "gpt-4o-turbo-extreme", "my-finetune", ""])
def test_unknown_models_are_unpriced_not_free(model):
    assert price_call(model, TokenUsage(input_tokens=5_000, output_tokens=5_000)) == PricedCall(
        0, False
    )
    assert context_window_for(model) == DEFAULT_CONTEXT_WINDOW
    assert max_output_tokens_for(model) == 4_096


def test_context_windows_and_offline_model():
    assert context_window_for("claude-3-7-sonnet-20250219") == 200_000
    assert context_window_for("gpt-4.1-mini") == 1_047_576
    assert context_window_for("gpt-3.5-turbo") == 16_385
    assert price_call(OFFLINE_MODEL_ID, TokenUsage(input_tokens=100)) == PricedCall(0, True)


def test_prompt_cache_tokens_are_priced_at_cache_rates():
    # claude-sonnet-4-5: input $3, cache write $3.75, cache read $0.30, output $15 per Mtok.
    usage = TokenUsage(
        input_tokens=100_000,
        output_tokens=1_000,
        cache_read_tokens=80_000,
        cache_write_tokens=15_000,
    )
    by_hand_usd = (5_000 * 3 + 15_000 * 3.75 + 80_000 * 0.30 + 1_000 * 15) / 1_000_000
    priced = price_call("claude-sonnet-4-5", usage)
    assert priced.cost_microcents == round(by_hand_usd * 100_000_000)
    # Priced as plain input, the same call would cost far more.
    plain = price_call("claude-sonnet-4-5", TokenUsage(input_tokens=100_000, output_tokens=1_000))
    assert plain.cost_microcents > 2 * priced.cost_microcents


def test_openai_cached_input_is_discounted_and_writes_cost_plain_input():
    usage = TokenUsage(input_tokens=10_000, output_tokens=0, cache_read_tokens=8_000)
    # gpt-4o: input $2.50, cached input $1.25 per Mtok.
    assert price_call("gpt-4o", usage).cost_microcents == round(
        (2_000 * 2.50 + 8_000 * 1.25) / 1_000_000 * 100_000_000
    )
    written = TokenUsage(input_tokens=10_000, cache_write_tokens=10_000)
    assert price_call("gpt-4o", written) == price_call("gpt-4o", TokenUsage(input_tokens=10_000))
