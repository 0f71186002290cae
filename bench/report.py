"""The one row shape every benchmark returns, and how rows become a table and JSON.

Each ``bench/<name>.py`` module exposes ``rows(quick: bool) -> list[Row]``; ``python -m bench``
(``make bench``) runs them all and prints one table. A row is one measured number, optionally
next to its *anchor* — the same kind of work done by a baseline measured in the same run (bare
pygls, plain sqlite3, raw httpx lines, JSONL ...) — so the ratio compares like with like on
whatever machine the run happened on. A row with a goal says pass or miss; rows without one are
context (sizes, throughput) and print no verdict.

Example::

    Row(
        measure="YAML export, 1,000 turns",
        value=0.42,
        unit="s",
        anchor="JSONL export",
        anchor_value=0.07,
        goal=Goal(limit=1.0, on="value", strict=True),  # value < 1 s
    )
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

GoalTarget = Literal["value", "ratio"]


@dataclass(frozen=True)
class Goal:
    """A limit on a row's value or on its ratio to the anchor (``<=``, or ``<`` if strict)."""

    limit: float
    on: GoalTarget = "ratio"
    strict: bool = False

    def met(self, value: float, ratio: float | None) -> bool | None:
        """True/False, or None when the goal is on a ratio the row cannot compute."""
        subject = value if self.on == "value" else ratio
        if subject is None or math.isnan(subject):
            return None
        return subject < self.limit if self.strict else subject <= self.limit

    def describe(self, unit: str) -> str:
        """``< 1 s`` or ``<= 1.1x``: what the table prints in the goal column."""
        sign = "<" if self.strict else "<="
        if self.on == "ratio":
            return f"{sign} {self.limit:g}x"
        return f"{sign} {self.limit:g} {unit}".rstrip()


@dataclass(frozen=True)
class Row:
    """One measured number, its same-run anchor, and its goal."""

    measure: str
    value: float
    unit: str
    anchor: str = ""
    anchor_value: float | None = None
    goal: Goal | None = None
    note: str = ""
    group: str = field(default="", compare=False)  # filled in by the runner: the module name

    @property
    def ratio(self) -> float | None:
        """value / anchor_value, when there is an anchor to divide by."""
        if self.anchor_value is None or self.anchor_value == 0:
            return None
        return self.value / self.anchor_value

    @property
    def verdict(self) -> str:
        """``pass``, ``miss``, or empty for context rows (and unmeasurable goals: ``n/a``)."""
        if self.goal is None:
            return ""
        met = self.goal.met(self.value, self.ratio)
        return "n/a" if met is None else ("pass" if met else "miss")

    def to_json(self) -> dict[str, Any]:
        """A plain dict with the derived ratio and verdict included."""
        data = asdict(self)
        data["ratio"] = self.ratio
        data["verdict"] = self.verdict
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Row:
        """Inverse of ``to_json`` (derived fields are recomputed, not trusted)."""
        goal = data.get("goal")
        return cls(
            measure=data["measure"],
            value=float(data["value"]),
            unit=data["unit"],
            anchor=data.get("anchor", ""),
            anchor_value=data.get("anchor_value"),
            goal=Goal(**goal) if goal else None,
            note=data.get("note", ""),
            group=data.get("group", ""),
        )


def coerce(row: object) -> Row:
    """A :class:`Row`, from a Row or from a row-like tuple with the same meaning.

    A bridge for modules written before this type: anything with ``measure``, ``value``,
    ``anchor`` (the anchor's number) and ``goal`` (a ratio limit or ``None``) attributes.
    """
    if isinstance(row, Row):
        return row
    goal = getattr(row, "goal", None)
    anchor = getattr(row, "anchor", None)
    return Row(
        measure=str(getattr(row, "measure")),  # noqa: B009 - a duck-typed row
        value=float(getattr(row, "value")),  # noqa: B009
        unit=str(getattr(row, "unit", "")),
        anchor="anchor" if isinstance(anchor, int | float) else "",
        anchor_value=float(anchor) if isinstance(anchor, int | float) else None,
        goal=Goal(float(goal)) if isinstance(goal, int | float) else None,
    )


def format_number(value: float | None, unit: str = "") -> str:
    """Three significant figures, thousands separators for big numbers, then the unit."""
    if value is None:
        return ""
    if math.isnan(value):
        return "nan"
    magnitude = abs(value)
    if magnitude >= 1000:
        text = f"{value:,.0f}"
    elif magnitude >= 100:
        text = f"{value:.0f}"
    elif magnitude >= 10:
        text = f"{value:.1f}"
    elif magnitude >= 1:
        text = f"{value:.2f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".rstrip()


HEADERS = ("measure", "value", "anchor", "anchor value", "ratio", "goal", "")


def table_lines(rows: list[Row]) -> list[str]:
    """The rows as an aligned text table (one header line, one line per row)."""
    cells = [
        (
            row.measure,
            format_number(row.value, row.unit),
            row.anchor,
            format_number(row.anchor_value, row.unit),
            f"{row.ratio:.2f}x" if row.ratio is not None else "",
            row.goal.describe(row.unit) if row.goal else "",
            row.verdict.upper() if row.verdict == "miss" else row.verdict,
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in [HEADERS, *cells]) for i in range(len(HEADERS))]
    right = {1, 3, 4}

    def render(line: tuple[str, ...]) -> str:
        parts = [
            text.rjust(width) if index in right else text.ljust(width)
            for index, (text, width) in enumerate(zip(line, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    lines = [render(HEADERS), render(tuple("-" * width for width in widths))]
    group = None
    for row, line in zip(rows, cells, strict=True):
        if row.group and row.group != group:
            group = row.group
            lines.append(f"[{group}]")
        lines.append(render(line))
    notes = [f"  {row.measure}: {row.note}" for row in rows if row.note]
    if notes:
        lines += ["", "notes:", *notes]
    return lines


def print_rows(rows: list[Row]) -> None:
    """Print a module's rows on their own (what ``python -m bench.<name>`` shows)."""
    print("\n".join(table_lines(rows)))
