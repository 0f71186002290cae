"""Runs of objects found again by identity: the shared parts of carrying results over (issue 25).

A turn's history tail is the previous turn's with some of the oldest dropped and new ones
appended. :func:`common_run` finds how far a new run repeats a kept one and
:class:`Positions` where its first object sits in it; ``llm/run_carry.py``,
``llm/projection.py``, ``llm/anthropic_json.py`` and ``store/orphan_carry.py`` build on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, count, islice
from operator import is_not


def common_run(objects: tuple[object, ...], kept: tuple[object, ...], start: int) -> int:
    """How many of ``objects`` are, one by one, the objects of ``kept`` from ``start``.

    Tuple equality tries identity first and is the fastest way through a long run of the
    very same objects (the common case: a run's objects carried over whole); it may also
    pass an equal but distinct object, which derives the same values (``derive`` is a pure
    function of an object's value). Otherwise the run ends at the first other object. Both
    are tuples: a slice of all of one is the tuple itself, and every copy (which touches each
    object, to count a reference) costs on a history of hundreds.
    """
    limit = min(len(objects), len(kept) - start)
    if objects[:limit] == kept[start : start + limit]:
        return limit
    differing = compress(count(), map(is_not, objects, islice(kept, start, start + limit)))
    return next(differing, limit)


class Positions:
    """Where objects sit in a chain of runs, by identity, in absolute positions.

    Each run of a chain continues the one before it (front dropped, end replaced or
    extended); positions count from the first run's first object, so the index carries over
    unchanged and only new objects are added. Entries of objects no longer held may linger:
    every answer is checked against the run (``run[index] is object``), and the index is
    rebuilt once they outnumber the live ones.
    """

    def __init__(self, objects: Sequence[object], origin: int) -> None:
        self._where = dict(zip(map(id, objects), count(origin), strict=False))

    def find(self, item: object, objects: Sequence[object], origin: int) -> int | None:
        """``item``'s index in ``objects`` (whose first is at ``origin``), if it is there."""
        at = self._where.get(id(item))
        if at is None:
            return None
        index = at - origin
        if 0 <= index < len(objects) and objects[index] is item:
            return index
        return None

    def extended(self, objects: Sequence[object], origin: int, new_from: int) -> Positions:
        """The index for ``objects`` (at ``origin``), whose first ``new_from`` it holds already.

        The index is handed over (the run it served is superseded), not copied.
        """
        if len(self._where) > 2 * len(objects) + 64:
            return Positions(objects, origin)
        self._where.update(
            zip(map(id, islice(objects, new_from, None)), count(origin + new_from), strict=False)
        )
        return self
