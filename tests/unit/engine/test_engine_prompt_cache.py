"""A 50-turn session on Claude through the real engine, adapter, store and cost governor.

The loopback Anthropic server bills every prompt the way the API does (see
:mod:`relavium_lsp.testing.prompt_cache`), so the session's spend is what prompt caching
would really cost: the adapter's ``cache_control`` breakpoints make each call read the
history the previous call wrote. The cost the store keeps must equal a hand calculation at
Claude Sonnet 4.5's list prices, and caching must make the session several times cheaper.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from relavium_lsp.llm.anthropic.provider import AnthropicProvider
from relavium_lsp.testing.loopback import LoopbackServer
from relavium_lsp.testing.prompt_cache import CacheBill, PromptCache, billing_responder, user_turn
from tests.unit.engine.engine_harness import CountingProvider, engine

TURNS = 50
MODEL = "claude-sonnet-4-5"
# Claude Sonnet 4.5 list prices in micro-cents per token: $3 input, $3.75 cache write,
# $0.30 cache read, $15 output per million tokens.
INPUT, CACHE_WRITE, CACHE_READ, OUTPUT = 300, 375, 30, 1_500


async def _run_session(tmp_path: Path, *, prompt_caching: bool) -> tuple[list[CacheBill], object]:
    bills: list[CacheBill] = []
    with LoopbackServer(responder=billing_responder(PromptCache(), bills)) as server:
        async with httpx.AsyncClient() as client:
            adapter = AnthropicProvider(
                "scripted", base_url=server.url, api_key="sk-ant-test", client=client, timeout_s=5
            )
            adapter.prompt_caching = prompt_caching
            async with engine(tmp_path, CountingProvider(adapter), model=MODEL) as h:
                session = await h.start()
                for turn in range(1, TURNS + 1):
                    result = await h.engine.send(session.id, user_turn(turn))
                    assert result.stop_reason == "stop", result
                await h.assert_books_balance(session.id)
                costs = await h.store.run(lambda s: s.get_costs(session.id))
                events = h.payloads(session.id, "cost:updated")
                record = await h.store.run(lambda s: s.get_session(session.id))
    assert len(bills) == len(events) == TURNS
    return bills, (costs, events, record)


def _billed_input_equivalent(bills: list[CacheBill]) -> float:
    """Input tokens as the invoice weighs them (a cache read is a tenth of a token)."""
    return sum(b.uncached + 1.25 * b.cache_write + 0.1 * b.cache_read for b in bills)


async def test_cached_fifty_turn_session_costs_what_a_hand_calculation_says(tmp_path: Path):
    bills, (costs, events, record) = await _run_session(tmp_path, prompt_caching=True)
    outputs = [event.output_tokens for event in events]
    by_hand = sum(
        b.uncached * INPUT + b.cache_write * CACHE_WRITE + b.cache_read * CACHE_READ + out * OUTPUT
        for b, out in zip(bills, outputs, strict=True)
    )
    (cost,) = costs
    assert cost.cost_microcents == record.totals.cost_microcents == by_hand
    assert cost.cache_read_tokens == sum(b.cache_read for b in bills) > 0
    assert cost.cache_write_tokens == sum(b.cache_write for b in bills) > 0
    assert cost.input_tokens == sum(b.prompt for b in bills)
    # Every cost:updated event carries its call's cache reads and writes.
    assert [(e.cache_read_tokens, e.cache_write_tokens) for e in events] == [
        (b.cache_read, b.cache_write) for b in bills
    ]
    assert events[-1].cumulative_cost_microcents == by_hand


async def test_prompt_caching_makes_a_long_session_several_times_cheaper(tmp_path: Path):
    cached, (cached_costs, _, _) = await _run_session(tmp_path / "a", prompt_caching=True)
    plain, (plain_costs, _, _) = await _run_session(tmp_path / "b", prompt_caching=False)
    assert sum(b.prompt for b in cached) == sum(b.prompt for b in plain)  # same prompts
    assert all(b.cache_read == b.cache_write == 0 for b in plain)
    assert _billed_input_equivalent(plain) > 3 * _billed_input_equivalent(cached)
    assert plain_costs[0].cost_microcents > 2 * cached_costs[0].cost_microcents
