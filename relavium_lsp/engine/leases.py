"""Turn leases as one process keeps them (``docs/design.md`` §7.1): tokens, clocks, heartbeats.

The rules live in :mod:`relavium_lsp.store.leases`; this module decides *when*: every turn
takes a fresh random token, renews its lease every ``heartbeat_s`` while it runs, and stops
(aborts) when the heartbeat finds an abort requested by another process — or finds the lease
gone, because another process took it over after this one stalled past ``timeout_s``.

Both times come from :class:`LeaseSettings`: by default a lease is stale 15 s after its last
heartbeat, heartbeats are 1 s apart; ``RELAVIUM_LEASE_TIMEOUT_S`` and
``RELAVIUM_LEASE_HEARTBEAT_S`` change them (tests use short ones). A dead owner on the same
host is noticed at once, without waiting for the timeout.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.leases import LeaseClock, this_host

DEFAULT_TIMEOUT_S = 15.0
DEFAULT_HEARTBEAT_S = 1.0
_log = logging.getLogger(__name__)

AbortReason = str  # "requested" (another window asked) or "lost" (the lease was taken over)


@dataclass(frozen=True)
class LeaseSettings:
    """How long a silent lease lives, and how often its owner renews it."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    heartbeat_s: float = DEFAULT_HEARTBEAT_S

    @classmethod
    def from_env(cls) -> LeaseSettings:
        """The defaults, overridden by ``RELAVIUM_LEASE_TIMEOUT_S`` / ``…_HEARTBEAT_S``."""
        timeout = _positive(os.environ.get("RELAVIUM_LEASE_TIMEOUT_S"), DEFAULT_TIMEOUT_S)
        heartbeat = _positive(
            os.environ.get("RELAVIUM_LEASE_HEARTBEAT_S"), min(DEFAULT_HEARTBEAT_S, timeout / 4)
        )
        return cls(timeout_s=timeout, heartbeat_s=min(heartbeat, timeout / 2))


def _positive(text: str | None, default: float) -> float:
    try:
        value = float(text) if text else default
    except ValueError:
        return default
    return value if value > 0 else default


class LeaseKeeper:
    """Mints lease tokens, answers "is that lease stale", and runs heartbeats."""

    def __init__(self, store: AsyncSessionStore, settings: LeaseSettings) -> None:
        self._store = store
        self.settings = settings
        self._tokens: set[str] = set()
        self._pid = os.getpid()
        self._host = this_host()

    def clock(self) -> LeaseClock:
        """The facts a staleness decision needs, as of now."""
        return LeaseClock(
            now=time.time(),
            timeout_s=self.settings.timeout_s,
            own_tokens=frozenset(self._tokens),
            host=self._host,
            pid=self._pid,
        )

    def new_token(self) -> str:
        """A fresh random token this process now answers for."""
        token = secrets.token_hex(16)
        self._tokens.add(token)
        return token

    def drop_token(self, token: str) -> None:
        """The lease under ``token`` is released (or lost)."""
        self._tokens.discard(token)

    def heartbeat(
        self, session_id: str, token: str, stop: Callable[[AbortReason], None]
    ) -> asyncio.Task[None]:
        """Renew the lease every ``heartbeat_s``; call ``stop`` on an abort request or loss."""
        return asyncio.create_task(self._beat(session_id, token, stop))

    async def _beat(self, session_id: str, token: str, stop: Callable[[AbortReason], None]) -> None:
        while True:
            await asyncio.sleep(self.settings.heartbeat_s)
            try:
                answer = await self._store.run(
                    lambda s: s.renew_lease(session_id, token, time.time())
                )
            except asyncio.CancelledError:
                raise
            except Exception:
                # A locked database for a moment: the next beat tries again; the timeout is
                # many beats long.
                _log.warning("could not renew the lease of session %s", session_id, exc_info=True)
                continue
            if answer is None:
                _log.warning("session %s: another process took over this turn's lease", session_id)
                stop("lost")
                return
            if answer:
                _log.info("session %s: another window asked to abort the turn", session_id)
                stop("requested")
                return
