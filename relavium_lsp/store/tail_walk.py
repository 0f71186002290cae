"""The history tail rule (docs/design.md §2.4) as a walk over rows, then a choice in memory.

The walk reads, newest first, the rows the rule visits for a budget; the choice applies the
rule to them. Walked for a budget ``B``, the rows decide the tail for every budget up to
``B`` without the database: a smaller budget visits a prefix of the same rows and stops for
the same reasons or earlier. That lets a turn read its tail in the same trip to the store as
its user message (``engine/session.py``), before its prompt — and with it the exact budget —
is known (issue 25). Only a tail that must extend back over budget to a tool call needs the
database again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from relavium_lsp.contracts.content import ToolCallPart, ToolResultPart
from relavium_lsp.contracts.session import SessionMessage


@dataclass(frozen=True)
class WalkedRow:
    """One visible row the walk took, with what the rule reads of it."""

    sequence: int
    tokens: int
    # None for a compaction marker superseded by a newer one (its tokens count, it is not
    # returned); for the newest marker, ``dropped_through`` is its boundary.
    message: SessionMessage | None
    dropped_through: int | None = None


@dataclass(frozen=True)
class TailWalk:
    """The rows walked back from the newest visible message for ``budget`` (newest first)."""

    budget: int
    rows: tuple[WalkedRow, ...]

    def within(self, budget: int) -> list[SessionMessage] | None:
        """The tail for ``budget`` (at most the walk's), or None when the store must extend it."""
        if budget > self.budget:
            return None
        marker, tail, kept = choose(self.rows, budget)
        if not kept and tail:
            return None  # only orphan tool results: the store walks back to their call
        return kept if marker is None else [marker, *kept]


def choose(
    rows: Sequence[WalkedRow], budget: int
) -> tuple[SessionMessage | None, list[SessionMessage], list[SessionMessage]]:
    """The rule over walked rows: (newest marker, the tail in model order, its kept part)."""
    taken: list[SessionMessage] = []
    marker: SessionMessage | None = None
    boundary = 0
    total = 0
    for row in rows:
        if row.sequence <= boundary:
            break
        if (taken or marker is not None) and total + row.tokens > budget:
            break
        total += row.tokens
        if row.message is None:
            continue
        if row.dropped_through is None:
            taken.append(row.message)
        elif marker is None:
            marker, boundary = row.message, row.dropped_through
    tail = taken[::-1]
    return marker, tail, drop_orphan_tool_results(tail)


def drop_orphan_tool_results(messages: list[SessionMessage]) -> list[SessionMessage]:
    """Drop tool messages whose results answer no tool call earlier in ``messages``."""
    seen_calls: set[str] = set()
    kept: list[SessionMessage] = []
    for message in messages:
        if message.role == "tool":
            answered = [
                part.tool_call_id for part in message.content if isinstance(part, ToolResultPart)
            ]
            if not answered or not all(call_id in seen_calls for call_id in answered):
                continue
        seen_calls.update(part.id for part in message.content if isinstance(part, ToolCallPart))
        kept.append(message)
    return kept
