"""Sessions working with other sessions (``docs/design.md`` §2.5).

Handoff audit rows, and peer messages between sessions of one workspace.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from relavium_lsp.contracts.base import WireModel

HandoffAuditAction = Literal["resumed", "replayed"]


class HandoffAuditRecord(WireModel):
    """A later use of a handoff: its child resumed in a new process, or a replay of it.

    ``sessionId`` is the session that made the handoff, ``childSessionId`` the child.
    """

    id: str
    session_id: str
    handoff_id: str
    child_session_id: str | None = None
    action: HandoffAuditAction
    detail: str | None = None
    created_at: str


PeerMode = Literal["fire_and_forget", "await_reply"]
DeliveryStatus = Literal["pending", "delivered", "replied", "failed", "aborted"]
# Default size and fan-out caps (``[peers]`` may change them, up to the ceilings): a peer
# message is a note between agents, not a data channel.
MAX_PEER_TEXT_CHARS = 8_000
MAX_PEER_RECIPIENTS = 8
# A turn that answers a peer message may send one on, and so on, at most this deep.
MAX_PEER_HOPS = 3
# Hard ceilings no configuration passes; requests are validated against these, the engine
# then applies the workspace's configured caps.
PEER_TEXT_CHARS_CEILING = 100_000
PEER_RECIPIENTS_CEILING = 64
PEER_HOPS_CEILING = 16
_SESSION_ID = Field(min_length=1, max_length=64)


class PeerDelivery(WireModel):
    """What became of a peer message at one recipient session.

    ``pending`` until it is appended (``delivered``, with the recipient's ``sequenceNumber``)
    or refused (``failed``, with ``error``); an awaited message ends ``replied`` (with the
    recipient's answer) or ``aborted`` (the sender's turn was aborted, and the recipient's
    with it).
    """

    to_session_id: str
    status: DeliveryStatus
    sequence_number: int | None = None
    delivered_at: str | None = None
    reply: str | None = None
    error: str | None = None
    updated_at: str


class PeerMessage(WireModel):
    """A message one session sent to others of the same workspace, with its deliveries."""

    id: str
    from_session_id: str
    from_agent: str
    text: str
    mode: PeerMode
    hops: int = Field(ge=1)
    call_id: str | None = None
    created_at: str
    deliveries: list[PeerDelivery] = Field(default_factory=list)


class SendPeerMessageParams(WireModel):
    """``relavium/sendPeerMessage``: send a message from one session to others.

    ``fire_and_forget`` appends it to each recipient's transcript (context for its next
    turn); ``await_reply`` (one recipient) runs a turn there with it and answers with the
    reply, the sender ``awaiting_peer`` meanwhile.
    """

    session_id: str = _SESSION_ID
    to_session_ids: list[str] = Field(min_length=1, max_length=PEER_RECIPIENTS_CEILING)
    text: str = Field(min_length=1, max_length=PEER_TEXT_CHARS_CEILING)
    mode: PeerMode = "fire_and_forget"

    @model_validator(mode="after")
    def _recipients(self) -> SendPeerMessageParams:
        if len(set(self.to_session_ids)) != len(self.to_session_ids):
            raise ValueError("toSessionIds names a session twice")
        if self.session_id in self.to_session_ids:
            raise ValueError("a session cannot send a peer message to itself")
        if self.mode == "await_reply" and len(self.to_session_ids) != 1:
            raise ValueError("await_reply sends to exactly one session")
        if any(not 1 <= len(item) <= 64 for item in self.to_session_ids):
            raise ValueError("a session id is 1 to 64 characters")
        return self


class SendPeerMessageResult(WireModel):
    """Result of ``relavium/sendPeerMessage``: the message with every delivery's outcome."""

    message: PeerMessage


class ListPeerMessagesParams(WireModel):
    """``relavium/listPeerMessages``: the peer messages a session sent and/or received."""

    session_id: str = _SESSION_ID
    direction: Literal["sent", "received", "all"] = "all"


class ListPeerMessagesResult(WireModel):
    """Result of ``relavium/listPeerMessages``: oldest first."""

    messages: list[PeerMessage]
