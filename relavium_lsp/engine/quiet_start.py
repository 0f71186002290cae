"""While a turn starts, background store work waits (issue 25; ``store/quiet_gate.py``).

:func:`quiet_while_starting` wraps the engine's ``send``; the hold ends at whichever comes
first:

- the turn's first provider request is written (``llm/request_sent.py``; the turn's task
  inherits the callback from this context): from there on the turn waits for the network,
  and the background work may run;
- ``send`` returns or raises, however (refused, failed, aborted, cancelled);
- the gate's limit passed (a slow turn start, or a provider that speaks no HTTP).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from relavium_lsp.llm.request_sent import notify_when_sent
from relavium_lsp.store.async_store import AsyncSessionStore


@contextmanager
def quiet_while_starting(store: AsyncSessionStore) -> Iterator[None]:
    """Hold back the store's background work until the turn's model request is sent."""
    hold = store.turn_starting()
    try:
        with notify_when_sent(hold.release):
            yield
    finally:
        hold.release()
