"""Values derived from immutable objects, found again by the objects' identity (issue 25).

A turn re-sends the whole history tail it loaded, and most of it is the same message objects
as the turn before: the store hands out one decoded object per unchanged row
(``store/decoded_messages.py``). What is derived from those objects — their projection for a
model call, their request JSON — is therefore kept here, keyed by the identity of the objects
it was derived from. An entry holds its objects, so no identity is reused while it lives, and
a changed row is a new object (a miss), so nothing stale is returned. Only ever used for
values that are pure functions of objects nobody edits.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    """A bounded, least-recently-used map from a run of objects (by identity) to a value."""

    def __init__(
        self, max_entries: int, weigh: Callable[[V], int] | None = None, max_weight: int = 0
    ) -> None:
        # By the first object's identity: (every object, the value). Entries hold their
        # objects, so an identity in here is never reused by another object.
        self._entries: OrderedDict[int, tuple[tuple[object, ...], V]] = OrderedDict()
        self._max_entries = max_entries
        self._weigh = weigh
        self._max_weight = max_weight
        self._weight = 0
        # Callers are on one event loop; the lock keeps a second loop's thread from
        # corrupting the weight bookkeeping of concurrent puts.
        self._lock = threading.Lock()

    def get(self, objects: Sequence[object]) -> V | None:
        """The value stored for exactly these objects (the same ones, in order), if any."""
        key = id(objects[0])
        # No lock: a lookup is atomic under the GIL, and a concurrent eviction only makes
        # the refresh below a no-op (this is on every turn's path, once per message).
        entry = self._entries.get(key)
        if entry is None:
            return None
        held, value = entry
        if len(held) != len(objects):
            return None
        if len(held) == 1:
            if held[0] is not objects[0]:
                return None
        elif any(kept is not given for kept, given in zip(held, objects, strict=True)):
            return None  # another run that starts with the same object
        try:
            self._entries.move_to_end(key)
        except KeyError:
            pass  # evicted meanwhile by another thread's put
        return value

    def put(self, objects: Sequence[object], value: V) -> None:
        """Store ``value`` for these objects (dropping the least recently used past the bound)."""
        held = tuple(objects)
        weight = self._weigh(value) if self._weigh is not None else 0
        if self._max_weight and weight > self._max_weight // 8:
            return  # one huge value must not push out all the others
        with self._lock:
            previous = self._entries.pop(id(held[0]), None)
            if previous is not None:
                self._weight -= self._weigh(previous[1]) if self._weigh is not None else 0
            self._entries[id(held[0])] = (held, value)
            self._weight += weight
            while len(self._entries) > self._max_entries or (
                self._max_weight and self._weight > self._max_weight
            ):
                _, (_, evicted) = self._entries.popitem(last=False)
                self._weight -= self._weigh(evicted) if self._weigh is not None else 0

    def __len__(self) -> int:
        return len(self._entries)
