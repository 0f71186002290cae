"""The LSP benchmark's cold-start rows: p50 against p50, with the spread in the notes.

Row building only (synthetic start times, no timing): the goal row compares our median start
with the bare pygls server's (≤ 1.1x); its note gives the count, the per-start range of each
and the ratio within each back-to-back pair, so a verdict near the limit shows its noise.
"""

from __future__ import annotations

import pytest

from bench.lsp import cold_start_rows
from bench.report import Goal


def test_the_goal_is_on_the_ratio_of_the_medians_and_the_note_shows_the_spread() -> None:
    starts = {"relavium": [0.40, 0.50, 0.90], "pygls": [0.50, 0.60, 0.80]}
    cpu = {"relavium": [0.30, 0.30, 0.40], "pygls": [0.40, 0.50, 0.40]}
    goal_row, cpu_row = cold_start_rows(starts, cpu, [1.0, 2.5])
    assert goal_row.goal == Goal(1.1)
    assert goal_row.value == pytest.approx(500) and goal_row.anchor_value == pytest.approx(600)
    assert goal_row.verdict == "pass"
    assert "3 starts each, interleaved in pairs" in goal_row.note
    assert "load 1.0-2.5" in goal_row.note
    assert "ours 400-900 ms, bare 500-800 ms" in goal_row.note
    # pairs: 0.8, 0.833, 1.125
    assert "ratio within a pair 0.80-1.12x (median 0.83x)" in goal_row.note
    assert cpu_row.goal is None and cpu_row.ratio == pytest.approx(0.3 / 0.4)
    assert "ratio within a pair 0.60-1.00x (median 0.75x)" in cpu_row.note


def test_a_slower_median_start_misses() -> None:
    starts = {"relavium": [0.70, 0.72, 0.71], "pygls": [0.60, 0.61, 0.62]}
    cpu = {"relavium": [0.5] * 3, "pygls": [0.4] * 3}
    goal_row, _ = cold_start_rows(starts, cpu, [0.5])
    assert goal_row.verdict == "miss"
