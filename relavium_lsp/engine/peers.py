"""Peer messages: sessions that talk to other sessions (``docs/design.md`` §2.5, seed 001).

A session sends a message to other sessions of the same workspace — from a turn through the
``message_session`` tool, or from the editor through ``relavium/sendPeerMessage``. The
message is stored once with a delivery row per recipient (``store/peer_messages.py``):

- ``fire_and_forget`` appends it to each recipient's transcript as a user message
  attributed to the sending agent (``agentSlug``): context for its next turn, no model call
  now (``session:message_appended`` tells the editors). A turn is never interrupted: for a
  recipient running one here the delivery stays ``pending`` and is appended when the turn
  has settled (or, if this process ends first, when the session is next loaded); one running
  in another window, or a cancelled session, fails the delivery with the reason.
- ``await_reply`` (one recipient) runs a turn there with the message; the recipient's answer
  is the reply, and the sender is ``awaiting_peer`` meanwhile. Aborting the sender's turn
  cancels the wait, which aborts the recipient's turn (the delivery ends ``aborted``).

Safety: recipients must be other, undeleted sessions of the sender's workspace; the text is
capped as is the fan-out; and a turn that answers a peer message sends on only so deep, so
two agents
cannot keep each other talking. A cycle cannot form anyway: a session awaiting a reply is
busy, and a busy session accepts nothing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from relavium_lsp.contracts.events import SessionMessageAppended
from relavium_lsp.contracts.peers import (
    DeliveryStatus,
    PeerDelivery,
    PeerMessage,
    PeerMode,
)
from relavium_lsp.contracts.session import AgentSessionRecord, SessionStatus
from relavium_lsp.errors import InvalidInput, RelaviumError, SessionBusy, SessionNotFound
from relavium_lsp.store import peer_messages
from relavium_lsp.store.models import utc_timestamp

if TYPE_CHECKING:
    from relavium_lsp.engine.live import LiveSessions
    from relavium_lsp.engine.scope import EngineServices
    from relavium_lsp.engine.session import AgentSession

_FINISHED = ("stop", "length", "tool_use")
_log = logging.getLogger(__name__)
_RECENT_MESSAGES = 16


class PeerMessenger:
    """Sends peer messages between the sessions of one engine."""

    def __init__(self, services: EngineServices, live: LiveSessions) -> None:
        self._services = services
        self._live = live
        # Session id → the hop count of the peer message its running turn answers.
        self._answering: dict[str, int] = {}
        # Deliveries waiting for a busy recipient's turn to settle.
        self._waiting: set[asyncio.Task[None]] = set()

    async def send(
        self,
        sender: AgentSession,
        to_session_ids: Sequence[str],
        text: str,
        mode: PeerMode,
        *,
        call_id: str | None = None,
        from_turn: bool = False,
    ) -> PeerMessage:
        """Send ``text`` from ``sender``; the message with each delivery's outcome.

        Raises for what is wrong with the request itself (an unknown, deleted, foreign or
        own recipient; too long; too many; too deep); a recipient that cannot take it now
        is a ``failed`` delivery instead, or a ``pending`` one that waits for its turn here.
        """
        # The caps are the sender's workspace's [peers] block (defaults when it has none).
        config = await self._live.workspace_config(sender.record.context.working_dir)
        caps = config.peers
        hops = self._answering.get(sender.id, 0) + 1
        if hops > caps.max_hops:
            raise InvalidInput(
                f"peer messages may be passed on at most {caps.max_hops} times; this session "
                "is answering one that has come that far"
            )
        if not text.strip():
            raise InvalidInput("the peer message is empty")
        if len(text) > caps.max_message_chars:
            raise InvalidInput(f"a peer message is at most {caps.max_message_chars} characters")
        if not 1 <= len(to_session_ids) <= caps.max_recipients:
            raise InvalidInput(f"a peer message goes to 1 to {caps.max_recipients} sessions")
        if mode == "await_reply" and len(to_session_ids) != 1:
            raise InvalidInput("await_reply sends to exactly one session")
        for to_session_id in to_session_ids:
            await self._check_recipient(sender, to_session_id)
        now = utc_timestamp()
        message = PeerMessage(
            id=str(uuid.uuid4()),
            from_session_id=sender.id,
            from_agent=sender.agent.id,
            text=text,
            mode=mode,
            hops=hops,
            call_id=call_id,
            created_at=now,
            deliveries=[
                PeerDelivery(to_session_id=to, status="pending", updated_at=now)
                for to in dict.fromkeys(to_session_ids)
            ],
        )
        store = self._services.store
        await store.run(lambda s: peer_messages.create_message(s.connection, message))
        if mode == "await_reply":
            await self._await_reply(sender, message, to_session_ids[0], from_turn=from_turn)
        else:
            for to_session_id in dict.fromkeys(to_session_ids):
                await self._append(message, to_session_id)
        stored = await store.run(lambda s: peer_messages.get_message(s.connection, message.id))
        # None only if a purge of the sender raced this call: what was sent is still the answer.
        return message if stored is None else stored

    async def resolve(self, sender: AgentSession, to: str) -> str:
        """A session id for ``to``: a session's id, else an agent's newest session here."""
        record = await self._services.store.run(lambda s: s.get_session(to))
        if record is not None:
            return record.id
        config = await self._live.workspace_config(sender.record.context.working_dir)
        if to not in config.agents:
            raise InvalidInput(f"there is no session or agent {to!r} in this workspace")
        working_dir = sender.record.context.working_dir or ""
        found = await self._services.store.run(
            lambda s: peer_messages.newest_session_of_agent(
                s.connection, working_dir, to, besides=sender.id
            )
        )
        if found is None:
            raise InvalidInput(f"the {to} agent has no open session in this workspace")
        return found

    async def _check_recipient(self, sender: AgentSession, to_session_id: str) -> None:
        if to_session_id == sender.id:
            raise InvalidInput("a session cannot send a peer message to itself")
        record = await self._services.store.run(lambda s: s.get_session(to_session_id))
        if record is None or record.deleted_at is not None:
            raise SessionNotFound(f"no session with id {to_session_id!r}")
        if not _same_workspace(sender.record, record):
            raise InvalidInput(
                f"session {to_session_id} belongs to another workspace; peer messages stay "
                "within one"
            )

    async def _unavailable(self, to_session_id: str, *, busy_here_fails: bool) -> str | None:
        """Why a recipient cannot take a message now, or ``None``."""
        served = self._live.served(to_session_id)
        if busy_here_fails and served is not None and served.busy:
            return "the session is running a turn; try again when it is idle"
        if await self._live.running_elsewhere(to_session_id) is not None:
            return "the session is running a turn in another window"
        record = await self._live.require_record(to_session_id)
        if record.status == "ended":
            return "the session was cancelled"
        return None

    async def deliver_pending(self, to_session_id: str) -> None:
        """Append what was queued for a session that was busy (say, before a restart)."""
        store = self._services.store
        queued = await store.run(lambda s: peer_messages.pending_for(s.connection, to_session_id))
        for message in queued:
            try:
                await self._append(message, to_session_id)
            except RelaviumError as error:  # loading the session must not fail for it
                _log.warning("a queued peer message could not be delivered: %s", error.message)

    async def close(self) -> None:
        """Stop waiting for busy recipients (their deliveries stay ``pending`` in the store)."""
        waiting = list(self._waiting)
        for task in waiting:
            task.cancel()
        if waiting:
            await asyncio.wait(waiting)

    async def _append(self, message: PeerMessage, to_session_id: str) -> None:
        store = self._services.store
        why = await self._unavailable(to_session_id, busy_here_fails=False)
        if why is not None:
            await store.run(
                lambda s: peer_messages.update_delivery(
                    s.connection, message.id, to_session_id, "failed", error=why
                )
            )
            return
        served = self._live.served(to_session_id)
        if served is not None and served.busy:
            # Never into a running turn: it stays pending until the turn has settled.
            task = asyncio.create_task(self._deliver_when_idle(served, message, to_session_id))
            self._waiting.add(task)
            task.add_done_callback(self._waiting.discard)
            return
        # No await between the check above and this submission: a turn starting now queues
        # its first write behind this one on the store's single thread.
        text = _as_received(message)
        sequence = await store.run(lambda s: peer_messages.deliver(s, message, to_session_id, text))
        if sequence is None:
            return
        bus = self._services.bus
        bus.emit(to_session_id, SessionMessageAppended(message_sequence=sequence, role="user"))
        await bus.drain(to_session_id)

    async def _deliver_when_idle(
        self, recipient: AgentSession, message: PeerMessage, to_session_id: str
    ) -> None:
        try:
            await recipient.until_idle()
            await self._append(message, to_session_id)
        except RelaviumError as error:
            _log.warning("a queued peer message could not be delivered: %s", error.message)

    async def _await_reply(
        self, sender: AgentSession, message: PeerMessage, to_session_id: str, *, from_turn: bool
    ) -> None:
        store = self._services.store

        async def settle(
            status: DeliveryStatus,
            *,
            sequence: int | None = None,
            reply: str | None = None,
            error: str | None = None,
        ) -> None:
            await store.run(
                lambda s: peer_messages.update_delivery(
                    s.connection,
                    message.id,
                    to_session_id,
                    status,
                    sequence_number=sequence,
                    reply=reply,
                    error=error,
                )
            )

        why = await self._unavailable(to_session_id, busy_here_fails=True)
        if why is not None:
            await settle("failed", error=why)
            return
        recipient = await self._live.get(to_session_id)
        last = await store.run(lambda s: s.last_message(to_session_id))
        before = 0 if last is None else last.sequence_number
        previous: SessionStatus = "streaming" if from_turn else sender.record.status

        async def stop_waiting() -> None:
            # From the editor the sender ran no turn; one the user started meanwhile owns
            # the status now.
            if from_turn or not sender.busy:
                await sender.set_status(previous)

        await sender.set_status("awaiting_peer")
        self._answering[to_session_id] = message.hops
        try:
            result = await recipient.send_message(_as_received(message), author=message.from_agent)
        except asyncio.CancelledError:
            # The sender's turn (or request) was aborted: the recipient's turn went with it.
            await asyncio.shield(settle("aborted", error="the sender stopped waiting"))
            if not from_turn:
                await asyncio.shield(stop_waiting())
            raise
        except SessionBusy as error:
            await settle("failed", error=error.message)
            await stop_waiting()
            return
        finally:
            self._answering.pop(to_session_id, None)
        await stop_waiting()
        sequence = await self._delivered_sequence(to_session_id, message.from_agent, before)
        if result.stop_reason in _FINISHED:
            await settle("replied", sequence=sequence, reply=result.text)
        elif result.stop_reason == "aborted":
            await settle("aborted", sequence=sequence, error="the recipient's turn was aborted")
        else:
            why = result.error.message if result.error is not None else result.stop_reason
            await settle("failed", sequence=sequence, error=why)

    async def _delivered_sequence(self, session_id: str, author: str, after: int) -> int | None:
        """The recipient's message that carried the peer message (if it is still visible)."""
        recent, _ = await self._services.store.run(
            lambda s: s.get_transcript(session_id, limit=_RECENT_MESSAGES)
        )
        for message in recent:
            if message.sequence_number > after and message.role == "user":
                return message.sequence_number if message.agent_slug == author else None
        return None


def _as_received(message: PeerMessage) -> str:
    """The message as the recipient's transcript holds it: who sent it, then the text.

    The editors recognise this header to show the message as a peer's (keep them in step:
    ``vscode-client/src/model/peerMessage.ts``, ``lua/relavium/peer.lua``).
    """
    waiting = ", awaiting your reply" if message.mode == "await_reply" else ""
    return (
        f"Message from the {message.from_agent} agent (session {message.from_session_id})"
        f"{waiting}:\n\n{message.text}"
    )


def _same_workspace(one: AgentSessionRecord, other: AgentSessionRecord) -> bool:
    first, second = one.context.working_dir, other.context.working_dir
    if first is None or second is None:
        return first == second
    return os.path.realpath(first) == os.path.realpath(second)
