"""The previous call's results, carried over to a call that re-sends its run of objects (issue 25).

Every turn re-sends the history tail of the turn before: the same objects (``IdentityMemo``),
with a few older ones dropped at the front and new ones appended. Looking each object up in a
memo is still a Python loop over the whole tail, every turn. A :class:`RunCarry` keeps, for a
few recent runs, the objects and what was derived from them — the JSON fragments joined into
one text, or a running total — with each object's offset in it. A new run that starts inside
a kept one reuses the stretch the two have in common (the same objects, or equal ones: see
:func:`common_run`) as one slice, and derives only the rest. The result is exactly what
deriving every object would give — so ``derive`` must be a pure function of objects nobody
edits — at the cost of C-level work over the run and Python work over what is new.

A kept run holds its objects, so an identity in it is never another object's while it lives.
Bounded by the number of runs (about one per session talking at once), their length and
the text they keep.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import TypeVar

# Below the llm layer, so the store's tail rule can carry its results the same way.
from relavium_lsp.store.identity_runs import Positions, common_run

__all__ = ["Positions", "RunCarry", "common_run"]

T = TypeVar("T")


@dataclass(eq=False)
class _Run:
    objects: tuple[object, ...]
    origin: int  # the absolute position of objects[0]
    positions: Positions
    # marks[i]: the measure (characters of ``text``, or the running total) before objects[i],
    # absolute; one more than objects (the end).
    marks: list[int]
    text: str  # the joined text (RunCarry.join), "" for totals


class RunCarry:
    """Joins or sums what is derived from runs of objects, carrying a recent run's over."""

    def __init__(
        self, max_runs: int = 8, max_objects: int = 65_536, max_chars: int = 16 * 1024 * 1024
    ) -> None:
        self._runs: list[_Run] = []  # least recently used first
        self._max_runs = max_runs
        self._max_objects = max_objects
        self._max_chars = max_chars
        self._lock = threading.Lock()

    def join(self, objects: Sequence[T], derive: Callable[[T], str]) -> str:
        """``",".join`` of the non-empty ``derive(x)`` for ``x`` in ``objects``."""
        with self._lock:
            run = self._continue(objects, lambda item: _piece(derive(item)), joined=True)
        return run.text[:-1] if run.text else ""

    def total(self, objects: Sequence[T], derive: Callable[[T], int]) -> int:
        """``sum(derive(x) for x in objects)``."""
        with self._lock:
            run = self._continue(objects, derive, joined=False)
        return run.marks[-1] - run.marks[0]

    def _continue(self, objects: Sequence[T], derive: Callable[[T], object], joined: bool) -> _Run:
        held = tuple(objects)
        kept, start = self._find(held)
        if kept is None:
            origin, same, marks, text = 0, 0, [0], ""
            positions = Positions(held, 0)
        else:
            same = common_run(held, kept.objects, start)
            origin = kept.origin + start
            marks = kept.marks[start : start + same + 1]
            base = kept.marks[0]
            text = kept.text[marks[0] - base : marks[-1] - base] if joined else ""
            positions = kept.positions.extended(held, origin, same)
            self._runs.remove(kept)  # this chain continues in the new run
        if same < len(held):
            mark = marks[-1]
            pieces: list[str] = []
            for item in islice(objects, same, None):
                value = derive(item)
                if joined:
                    assert isinstance(value, str)
                    pieces.append(value)
                    mark += len(value)
                else:
                    assert isinstance(value, int)
                    mark += value
                marks.append(mark)
            if joined:
                text += "".join(pieces)
        run = _Run(held, origin, positions, marks, text)
        if held and len(held) <= self._max_objects and len(text) <= self._max_chars // 2:
            self._runs.append(run)
            total = sum(len(kept.objects) for kept in self._runs)
            chars = sum(len(kept.text) for kept in self._runs)
            while (
                len(self._runs) > self._max_runs
                or total > self._max_objects
                or chars > self._max_chars
            ):
                dropped = self._runs.pop(0)
                total -= len(dropped.objects)
                chars -= len(dropped.text)
        return run

    def _find(self, objects: Sequence[object]) -> tuple[_Run | None, int]:
        if not objects:
            return None, 0
        for run in reversed(self._runs):
            start = run.positions.find(objects[0], run.objects, run.origin)
            if start is not None:
                return run, start
        return None, 0

    def __len__(self) -> int:
        return len(self._runs)


def _piece(fragment: str) -> str:
    """A fragment as it sits in the joined text: followed by its comma, or nothing if empty."""
    return f"{fragment}," if fragment else ""
