"""Start-up without the cyclic garbage collector (issue 25, cold start).

Starting the language server imports lsprotocol's ~600 attrs classes and builds pygls's
converter: hundreds of thousands of long-lived objects and almost no garbage. With the
collector on, every few hundred allocations trigger a collection, and each full one walks
everything allocated so far again — about 5 % of the CPU to the ``initialize`` result, for
nothing. :func:`gc_paused` switches it off for such a stretch and then *freezes* what the
stretch built (``gc.freeze``: moved to the permanent generation, never walked again) before
switching it back on, so no later collection pays for the start-up objects either.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the body with the cyclic GC off; freeze what survives it, then turn it back on.

    Nested or with the collector already off (a caller's choice), it changes nothing.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
