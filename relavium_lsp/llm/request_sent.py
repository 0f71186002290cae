"""Telling the caller when a provider request's bytes are written (issue 25).

A starting turn keeps background store work waiting until its model request is on its way
(``store/quiet_gate.py``). "On its way" is a moment inside ``httpx``: the last byte of the
request body handed to the socket. ``httpcore`` reports it through its ``trace`` request
extension; :func:`notify_when_sent` names, for the current task, the callback that hears of
it, and :func:`trace_extension` is what ``http_call.stream_call`` passes along — nothing
(no tracing at all) when no callback was named.

The callback runs on the event loop, maybe more than once (one per request, and after a
failed write too): make it idempotent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_ON_SENT: ContextVar[tuple[Callable[[], None], ...]] = ContextVar(
    "relavium_request_sent", default=()
)
# httpcore's trace names for the end of the request (HTTP/1.1 and HTTP/2); any failure
# (connecting, writing) ends the wait as well.
_SENT = ("send_request_body.complete", ".failed")


@contextmanager
def notify_when_sent(callback: Callable[[], None]) -> Iterator[None]:
    """Within the block, call ``callback`` when a provider request has been written.

    Set in the current task's context: tasks started inside the block inherit it (the turn's
    task does), and keep it after the block ends. Blocks nest: every callback named by an
    enclosing block is called too.
    """
    token = _ON_SENT.set((*_ON_SENT.get(), callback))
    try:
        yield
    finally:
        _ON_SENT.reset(token)


def trace_extension() -> dict[str, Any] | None:
    """The request extensions that report the write, or ``None`` when nobody listens."""
    callbacks = _ON_SENT.get()
    if not callbacks:
        return None

    async def trace(name: str, info: dict[str, Any]) -> None:
        if name.endswith(_SENT):
            for callback in callbacks:
                callback()

    return {"trace": trace}
