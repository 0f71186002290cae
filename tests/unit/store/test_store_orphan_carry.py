"""The orphan tool-result rule carried over from the previous tail equals the plain rule.

Tails evolve as a turn's do — the oldest messages dropped (a budget), new ones appended, the
newest replaced (a rollback) — over messages whose tool results answer calls made earlier,
later, twice or never, and tool messages that make calls themselves (left to the plain rule).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from relavium_lsp.contracts.content import TextPart, ToolCallPart, ToolResultPart
from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.store.orphan_carry import carried_orphan_rule
from relavium_lsp.store.tail_walk import drop_orphan_tool_results
from tests.hypothesis_profiles import examples

calls = st.sampled_from(["c1", "c2", "c3", "c4"])
content = st.lists(
    st.one_of(
        st.just(TextPart(text="t")),
        st.builds(lambda call: ToolCallPart(id=call, name="grep", args={}), calls),
        st.builds(lambda call: ToolResultPart(tool_call_id=call, result="r"), calls),
    ),
    max_size=3,
)
steps = st.lists(
    st.tuples(
        st.integers(0, 4),
        st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool", "tool"]), content)),
        st.integers(0, 2),
        st.booleans(),  # a smaller window of the same tail too
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=examples(300), deadline=None)
@given(steps)
def test_the_carried_rule_equals_the_plain_one(
    plan: list[tuple[int, list[Any], int, bool]],
) -> None:
    tail: list[SessionMessage] = []
    sequence = 0
    for dropped, appended, replaced, smaller in plan:
        del tail[:dropped]
        del tail[max(0, len(tail) - replaced) :]
        for role, parts in appended:
            sequence += 1
            tail.append(
                SessionMessage(
                    id=f"m{sequence}",
                    session_id="s",
                    sequence_number=sequence,
                    role=role,
                    content=parts,
                    timestamp="t",
                )
            )
        assert carried_orphan_rule(list(tail), drop_orphan_tool_results) == (
            drop_orphan_tool_results(list(tail))
        )
        if not smaller:
            continue
        # A smaller window of the same tail (a smaller budget) right after.
        half = tail[len(tail) // 2 :]
        assert carried_orphan_rule(half, drop_orphan_tool_results) == (
            drop_orphan_tool_results(half)
        )
