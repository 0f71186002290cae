"""The connection and the lease fences every part of the session repository shares.

``SessionStore`` (``store/sessions.py``) is put together from mixins (``repo_sessions``,
``repo_messages``, ``repo_turns``, ``repo_costs``, ``repo_events``); this is their common
base. Only the store uses them.
"""

from __future__ import annotations

from relavium_lsp.errors import LeaseLost
from relavium_lsp.store.db.connection import Connection
from relavium_lsp.store.rows import leases
from relavium_lsp.store.rows.decoded_messages import DecodedMessages
from relavium_lsp.store.rows.tail_walk import TailWalk


class RepositoryBase:
    """One connection and the leases its turns hold (base of ``SessionStore``)."""

    def __init__(self, connection: Connection) -> None:
        """Wrap an open, migrated connection (see :meth:`open`)."""
        self._connection = connection
        # session id → the token of the lease this connection's turn holds on it. While one
        # is held, its message, rollback and cost writes are fenced: each checks, in its own
        # transaction, that the lease is still ours (docs/design.md §7.1).
        self._fences: dict[str, str] = {}
        # What the turns' history tails decoded, for the next turn (store/rows/decoded_messages.py).
        self._decoded = DecodedMessages()
        # session id → this connection's last walk of its history tail (store/rows/tail_walk.py).
        self._walks: dict[str, TailWalk] = {}

    def _check_fence(self, session_id: str) -> None:
        """Inside a write transaction: refuse if our turn's lease was taken over meanwhile."""
        token = self._fences.get(session_id)
        if token is None:
            return
        lease = leases.read_lease(self._connection, session_id)
        if lease is None or lease.owner_token != token:
            raise LeaseLost(
                f"session {session_id}: another window took this turn over (its heartbeat "
                "stopped for longer than the lease timeout); nothing more was written"
            )
