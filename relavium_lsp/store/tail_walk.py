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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

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


Stop = Literal["end", "boundary", "budget"]


@dataclass(frozen=True)
class TailWalk:
    """The rows walked back from the newest visible message for ``budget`` (newest first).

    Also what the next turn's walk continues from (``store/messages.py: walk_tail``): it reads
    only the rows newer than ``rows[0]``, valid while no other connection wrote to the
    database (``data_version``, SQLite's count of other connections' commits) and the newest
    of these is still visible — rows are append-only and only ever hidden as a suffix.
    """

    rows: tuple[WalkedRow, ...]
    stop: Stop
    budget: int
    data_version: int = 0
    total: int = 0  # the rows' tokens
    boundary: int | None = None  # the newest marker's, once met
    stopped_at: int | None = None  # the sequence of the row the walk stopped at, if any

    def within(self, budget: int) -> list[SessionMessage] | None:
        """The tail for ``budget`` (at most the walk's), or None when the store must extend it."""
        if budget > self.budget:
            return None
        if budget >= self.total:  # every walked row fits: the walk's own choice stands
            marker, tail, kept = _all_of(self.rows)
        else:
            marker, tail, kept = choose(self.rows, budget)
        if not kept and tail:
            return None  # only orphan tool results: the store walks back to their call
        return kept if marker is None else [marker, *kept]


@dataclass
class Walker:
    """The walk's rule, one row at a time (newest first)."""

    budget: int
    rows: list[WalkedRow] = field(default_factory=list)
    stopped_at: int | None = None  # see TailWalk
    boundary: int | None = None
    total: int = 0
    stop: Stop = "end"

    def fits(self, sequence: int, tokens: int) -> bool:
        """Whether the walk takes this row (else it stops here)."""
        if self.boundary is not None and sequence <= self.boundary:
            self.stop, self.stopped_at = "boundary", sequence
            return False
        if self.rows and self.total + tokens > self.budget:
            self.stop, self.stopped_at = "budget", sequence
            return False
        self.total += tokens
        return True

    def take(
        self,
        sequence: int,
        tokens: int,
        message: Callable[[], SessionMessage],
        boundary: Callable[[], int] | None,
    ) -> None:
        """Take a row that fits; ``boundary`` reads a compaction marker's (None: a message)."""
        if boundary is None:
            self.rows.append(WalkedRow(sequence, tokens, message()))
        elif self.boundary is None:
            self.boundary = boundary()
            self.rows.append(WalkedRow(sequence, tokens, message(), self.boundary))
        else:  # superseded by the newer marker: counted, never returned
            self.rows.append(WalkedRow(sequence, tokens, None))

    def continue_over(self, known: TailWalk) -> bool:
        """Walk on over an earlier walk's rows; False when they cannot decide the tail."""
        if self.boundary is None and self.total + known.total <= self.budget:
            # No newer marker and all of them fit: taken as they were (the common case).
            self.rows.extend(known.rows)
            self.total += known.total
            self.boundary = known.boundary
            return self._stops_as(known)
        for row in known.rows:
            if not self.fits(row.sequence, row.tokens):
                return True
            if row.message is not None and row.dropped_through is None:
                self.rows.append(row)
            elif self.boundary is None:
                if row.message is None:
                    return False  # a superseded marker would now be the boundary
                self.boundary = row.dropped_through
                self.rows.append(row)
            else:
                self.rows.append(WalkedRow(row.sequence, row.tokens, None))
        return self._stops_as(known)

    def _stops_as(self, known: TailWalk) -> bool:
        """Every known row taken: the earlier walk's reason to stop decides, if it holds."""
        self.stop, self.stopped_at = known.stop, known.stopped_at
        if (
            known.stop == "budget"
            and self.boundary is not None
            and known.stopped_at is not None
            and known.stopped_at <= self.boundary
        ):
            # A newer marker's boundary now covers the row the budget stopped at: a fresh
            # walk checks the boundary first, so that is where it stops.
            self.stop = "boundary"
            return True
        if known.stop == "boundary":
            return self.boundary == known.boundary
        return known.stop == "end" or self.budget <= known.budget

    def known(self, data_version: int) -> TailWalk:
        """The walk so far, for the plan and for the next turn to continue from."""
        return TailWalk(
            tuple(self.rows),
            self.stop,
            self.budget,
            data_version,
            self.total,
            self.boundary,
            self.stopped_at,
        )


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


def _all_of(
    rows: Sequence[WalkedRow],
) -> tuple[SessionMessage | None, list[SessionMessage], list[SessionMessage]]:
    """:func:`choose` when every row fits: the walk already stopped where the rule stops."""
    marker = next((row.message for row in rows if row.dropped_through is not None), None)
    tail = [
        row.message
        for row in reversed(rows)
        if row.message is not None and row.dropped_through is None
    ]
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
