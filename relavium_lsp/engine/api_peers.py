"""The engine's front door, part 6: sessions working with sessions (docs/design.md §2.5).

Peer messages between sessions of one workspace, and the audit of delegations' handoffs
(resumes and replays); mixed into :class:`~relavium_lsp.engine.api.Engine`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from relavium_lsp.contracts.peers import HandoffAuditRecord, PeerMessage, PeerMode
from relavium_lsp.engine.api_base import EngineBase
from relavium_lsp.errors import SessionBusy
from relavium_lsp.store.rows import handoffs, peer_messages


class Peers(EngineBase):
    """Peer messages and handoff audit (part of :class:`~relavium_lsp.engine.api.Engine`)."""

    async def send_peer_message(
        self, session_id: str, to_session_ids: Sequence[str], text: str, mode: PeerMode
    ) -> PeerMessage:
        """Send a peer message from a session that is not running a turn."""
        sender = await self._live.get(session_id)
        if sender.busy:
            raise SessionBusy(f"session {session_id} is running a turn; send it afterwards")
        return await self._live.peers.send(sender, to_session_ids, text, mode)

    async def list_peer_messages(
        self, session_id: str, direction: Literal["sent", "received", "all"] = "all"
    ) -> list[PeerMessage]:
        """Peer messages a session sent and/or received, with their deliveries."""
        await self._live.require_record(session_id)
        return await self._services.store.run(
            lambda s: peer_messages.list_messages(s.connection, session_id, direction)
        )

    async def list_handoff_audit(self, session_id: str) -> list[HandoffAuditRecord]:
        """Resumes and replays of the handoffs a session made or was started by."""
        await self._live.require_record(session_id)
        return await self._services.store.run(
            lambda s: handoffs.list_audit(s.connection, session_id)
        )
