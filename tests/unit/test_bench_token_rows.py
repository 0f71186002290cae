"""The LSP benchmark's per-token rows: the goal is on what the server adds, not the total.

Row building only (synthetic latencies, no timing): each rate gets the absolute p99 and p50
as context against the bare relay, and one goal row — the median over interleaved rounds of
our p99 minus the relay's p99 in that round, ≤ 1 ms — with the per-round spread of that
difference and the pooled difference in its note. One stalled round cannot flip the verdict;
a cause in most rounds does.
"""

from __future__ import annotations

import pytest

from bench.lsp import RATES, token_rows
from bench.paced import Latencies
from bench.report import Goal


def _latencies(milliseconds: list[float]) -> Latencies:
    return Latencies([value / 1000 for value in milliseconds])


def _rounds(base: float, spread: float) -> list[Latencies]:
    # three rounds of 100 tokens; the slowest token of round n is base + n * spread
    return [_latencies([base] * 99 + [base + number * spread]) for number in range(3)]


def test_each_rate_has_context_rows_and_one_server_added_goal_row():
    mine = {rate: _rounds(2.0, 0.5) for rate in RATES}
    floor = {rate: _rounds(1.5, 0.1) for rate in RATES}
    rows = token_rows(mine, floor, [0.5, 0.7])
    assert len(rows) == 3 * len(RATES)
    goals = [row for row in rows if row.goal is not None]
    assert [row.goal for row in goals] == [Goal(1.0, on="value")] * len(RATES)
    for row in goals:
        assert row.measure.startswith("server-added per-token latency at ")
        assert row.anchor_value is None and row.ratio is None
        # per round: (2.0 + n*0.5) - (1.5 + n*0.1) at p99 of 100 tokens = the slowest token,
        # so 0.5, 0.9 and 1.3 ms: the median is 0.9
        assert row.value == pytest.approx(0.9)
        assert row.verdict == "pass"
        assert "median over 3 interleaved rounds" in row.note
        assert "per round +0.50 to +1.30 ms" in row.note
        # pooled p99 (nearest rank over 300 tokens: the 297th) is the base, for both
        assert "pooled over every token 2.00 ms - 1.50 ms = +0.50 ms" in row.note
    for row in rows:
        if row.goal is None:
            assert row.anchor == "bare pygls relay" and row.ratio is not None


def test_the_goal_row_misses_when_the_server_adds_more_than_a_millisecond():
    mine = {rate: _rounds(3.0, 0.0) for rate in RATES}
    floor = {rate: _rounds(1.0, 0.0) for rate in RATES}
    verdicts = [row.verdict for row in token_rows(mine, floor, [1.0]) if row.goal]
    assert verdicts == ["miss"] * len(RATES)


def test_one_stalled_round_does_not_decide_the_verdict():
    # Rounds 0 and 2 add 0.2 ms at p99; in round 1 a stall delayed ten of our tokens by 8 ms.
    def ours(stalled: bool) -> Latencies:
        return _latencies([1.0] * 90 + [1.2] * 10 if not stalled else [1.0] * 90 + [9.0] * 10)

    relay = _latencies([1.0] * 100)
    mine = {rate: [ours(False), ours(True), ours(False)] for rate in RATES}
    floor = {rate: [relay, relay, relay] for rate in RATES}
    for row in token_rows(mine, floor, [1.0]):
        if row.goal is not None:
            assert row.value == pytest.approx(0.2) and row.verdict == "pass"
            assert "per round +0.20 to +8.00 ms" in row.note
            assert "= +8.00 ms" in row.note  # the pooled p99 would have missed


def test_a_cause_in_most_rounds_still_misses():
    slow = _latencies([1.0] * 95 + [3.5] * 5)
    fast = _latencies([1.0] * 100)
    mine = {rate: [slow, fast, slow] for rate in RATES}
    floor = {rate: [fast, fast, fast] for rate in RATES}
    verdicts = [row.verdict for row in token_rows(mine, floor, [1.0]) if row.goal]
    assert verdicts == ["miss"] * len(RATES)
