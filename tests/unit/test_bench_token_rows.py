"""The LSP benchmark's per-token rows: the goal is on what the server adds, not the total.

Row building only (synthetic latencies, no timing): each rate gets the absolute p99 and p50
as context against the bare relay, and one goal row — our p99 minus the relay's p99 over the
same interleaved rounds, ≤ 1 ms — with the per-round spread of that difference in its note.
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
        # merged p99 (nearest rank over 300 tokens: the 297th) is the base, for both
        assert row.value == pytest.approx(2.0 - 1.5)
        assert row.verdict == "pass"
        # per round: (2.0 + n*0.5) - (1.5 + n*0.1) at p99 of 100 tokens = the slowest token
        assert "per round +0.50 to +1.30 ms" in row.note
    for row in rows:
        if row.goal is None:
            assert row.anchor == "bare pygls relay" and row.ratio is not None


def test_the_goal_row_misses_when_the_server_adds_more_than_a_millisecond():
    mine = {rate: _rounds(3.0, 0.0) for rate in RATES}
    floor = {rate: _rounds(1.0, 0.0) for rate in RATES}
    verdicts = [row.verdict for row in token_rows(mine, floor, [1.0]) if row.goal]
    assert verdicts == ["miss"] * len(RATES)
