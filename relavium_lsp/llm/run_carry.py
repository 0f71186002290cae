"""The previous call's per-object results, carried over to a call that re-sends its run (issue 25).

Every turn re-sends the history tail of the turn before: the same objects (``IdentityMemo``),
with a few older ones dropped at the front and new ones appended. Looking each object up in a
memo is still a Python loop over the whole tail, every turn. A :class:`RunCarry` keeps, for a
few recent runs, the objects and what was derived from each; a new run that starts inside a
kept one reuses the derived values of the longest common stretch (found by identity, with
C-level iteration) and derives only the rest. The result is exactly ``[derive(x) for x in
objects]`` — so ``derive`` must be a pure function of objects nobody edits — at a cost of
C-speed work over the run plus Python work over what is new.

A kept run holds its objects, so an identity in it is never another object's while it lives.
Bounded by the number of runs (about one per session talking at once) and their length.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress, count, islice
from operator import is_not
from typing import Generic, TypeVar

T = TypeVar("T")
V = TypeVar("V")


@dataclass(frozen=True, eq=False)
class _Run(Generic[V]):
    objects: tuple[object, ...]
    values: list[V]
    positions: dict[int, int]  # id(object) → its index in ``objects``


def common_run(objects: Sequence[object], kept: Sequence[object], start: int) -> int:
    """How many of ``objects`` are, one by one, the very objects of ``kept`` from ``start``."""
    limit = min(len(objects), len(kept) - start)
    differing = compress(count(), map(is_not, objects, islice(kept, start, start + limit)))
    return next(differing, limit)


class RunCarry(Generic[V]):
    """``derive`` over runs of objects, reusing the values of a recent run they continue."""

    def __init__(self, max_runs: int = 8, max_objects: int = 65_536) -> None:
        self._runs: list[_Run[V]] = []  # least recently used first
        self._max_runs = max_runs
        self._max_objects = max_objects
        self._lock = threading.Lock()

    def map(self, objects: Sequence[T], derive: Callable[[T], V]) -> list[V]:
        """``[derive(x) for x in objects]``; the caller must not change the list it gets."""
        if not objects:
            return []
        kept, start = self._find(objects[0])
        if kept is None:
            values = list(map(derive, objects))
        else:
            same = common_run(objects, kept.objects, start)
            values = kept.values[start : start + same]
            values.extend(map(derive, islice(objects, same, None)))
        self._keep(kept, objects, values)
        return values

    def _find(self, first: object) -> tuple[_Run[V] | None, int]:
        key = id(first)
        with self._lock:
            for run in reversed(self._runs):
                start = run.positions.get(key)
                if start is not None:  # the run holds its objects: this is ``first`` itself
                    return run, start
        return None, 0

    def _keep(self, replaced: _Run[V] | None, objects: Sequence[object], values: list[V]) -> None:
        if len(objects) > self._max_objects:
            return
        held = tuple(objects)
        run = _Run(held, values, dict(zip(map(id, held), count(), strict=False)))
        with self._lock:
            if replaced is not None and replaced in self._runs:
                self._runs.remove(replaced)  # a session's run continues in the new one
            self._runs.append(run)
            total = sum(len(kept.objects) for kept in self._runs)
            while len(self._runs) > self._max_runs or total > self._max_objects:
                total -= len(self._runs.pop(0).objects)

    def __len__(self) -> int:
        return len(self._runs)
