"""The cost of one model call in integer micro-cents (see :mod:`relavium_lsp.llm.catalog`).

Prompt tokens are split three ways: cache reads and cache writes at the model's cache
rates, the rest at the input rate. An unknown model is ``priced=False`` with cost 0 — the
tokens are still real and reported; the session simply cannot say what they cost. It is
never presented as free.
"""

from __future__ import annotations

from dataclasses import dataclass

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.catalog import model_info

_PER_MILLION = 1_000_000


@dataclass(frozen=True)
class PricedCall:
    """A call's cost and whether the model had a known price."""

    cost_microcents: int
    priced: bool


def _tokens_cost(tokens: int, microcents_per_mtok: int) -> int:
    # Round half up once per call and side; micro-cents are 1e-8 USD, so the error is nil.
    return (tokens * microcents_per_mtok + _PER_MILLION // 2) // _PER_MILLION


def price_call(model: str, usage: TokenUsage) -> PricedCall:
    """Price ``usage`` spent on ``model``."""
    info = model_info(model)
    if info is None:
        return PricedCall(cost_microcents=0, priced=False)
    cost = (
        _tokens_cost(usage.uncached_input_tokens, info.input_microcents_per_mtok)
        + _tokens_cost(usage.cache_read_tokens, info.cache_read_microcents_per_mtok)
        + _tokens_cost(usage.cache_write_tokens, info.cache_write_microcents_per_mtok)
        + _tokens_cost(usage.output_tokens, info.output_microcents_per_mtok)
    )
    return PricedCall(cost_microcents=cost, priced=True)
