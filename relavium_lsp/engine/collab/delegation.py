"""Delegation: a session hands a task to another agent's child session (``docs/design.md`` §2.5).

The ``delegate`` tool (``tools/delegate.py``) calls :meth:`ChildSessions.delegate` of the
calling session. A child is an ordinary session with ``parentSessionId`` set: it is created
with the named agent, runs the task as its first turn (the task message is attributed to the
delegating agent), and its final answer becomes the tool result. Meanwhile the parent is
``awaiting_peer``. A handoff record (from, to, reason, the parent's message that asked) is
stored and announced with ``agent:handoff`` when the child starts and when it returns.

Limits (the ``[delegation]`` configuration, per delegating agent; the defaults are
``contracts.delegation``'s): levels of delegation, children
running per parent, and a child may spend only what is left under the parent's cost
cap — everything a session's descendants spend counts toward its own cap. While the task
runs, the child's governor has the parent's as its ``parent`` (``engine/turn/governor.py``): each
of the child's calls is checked against the top-most session's cap with its ``on_exceed``,
and what it spends counts toward the parent at once. A child loaded again later (another
process, a restart) keeps the cap stored in its handoff row and fails past it. Aborting the
parent's turn cancels the tool call, which aborts the child's turn (``send_message`` aborts
its turn when its caller is cancelled).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from typing import TYPE_CHECKING

from relavium_lsp.contracts.content import ToolCallPart
from relavium_lsp.contracts.events import AgentHandoff
from relavium_lsp.contracts.session import AgentSessionRecord, HandoffRecord
from relavium_lsp.engine.collab.handoff_context import gather_context, resolve_filter
from relavium_lsp.engine.sessions.session import AgentSession
from relavium_lsp.errors import RelaviumError
from relavium_lsp.store.rows import handoffs
from relavium_lsp.tools.base import DelegationOutcome, DelegationRequest, PeerRequest
from relavium_lsp.tools.delegate import DELEGATE_TOOL

if TYPE_CHECKING:
    from relavium_lsp.config import WorkspaceConfig
    from relavium_lsp.engine.collab.directory import SessionDirectory
    from relavium_lsp.engine.collab.peers import PeerMessenger
    from relavium_lsp.store.async_store import AsyncSessionStore
    from relavium_lsp.store.sessions import SessionStore

_TITLE_CHARS = 80
_RECENT_MESSAGES = 16


class ChildSessions:
    """The delegations of one parent session (its ``Delegator``)."""

    def __init__(
        self, parent: AgentSession, live: SessionDirectory, messenger: PeerMessenger
    ) -> None:
        self._parent = parent
        self._live = live
        self._messenger = messenger
        self._running = 0

    async def delegate(self, request: DelegationRequest) -> DelegationOutcome:
        """Run ``request.task`` in a new child session of ``request.agent``; its answer."""
        parent = self._parent
        store = parent.scope.store
        refusal = await self._refusal(request)
        if refusal is not None:
            return DelegationOutcome(refusal, failed=True)
        config = await self._live.workspace_config(parent.record.context.working_dir)
        input_filter = resolve_filter(config.delegation.for_agent(parent.agent.id), request)
        self._running += 1
        try:
            remaining = parent.governor.remaining_microcents()
            sequence, call_id = await self._asking_message(request)
            context = await gather_context(
                store,
                parent.id,
                before_sequence=sequence,
                from_agent=parent.agent.id,
                input_filter=input_filter,
            )
            child = await self._live.create(
                context=parent.record.context,
                agent_ref=request.agent,
                title=_title(request),
                # Started by the parent's agent, not by a person (seed 002's source).
                source=parent.record.source.model_copy(
                    update={"interactive": False, "trigger_id": parent.id}
                ),
                parent_session_id=parent.id,
                cost_cap=remaining,
            )
            await store.run(
                lambda s: handoffs.record_handoff(
                    s.connection,
                    session_id=parent.id,
                    child_session_id=child.id,
                    from_agent=parent.agent.id,
                    to_agent=child.agent.id,
                    reason=request.reason,
                    sequence_number=sequence,
                    call_id=call_id,
                    cost_cap_microcents=remaining,
                    input_filter=context.input_filter,
                    context_messages=context.messages,
                )
            )
            handoff = AgentHandoff(
                from_agent=parent.agent.id,
                to_agent=child.agent.id,
                reason=request.reason,
                child_session_id=child.id,
            )
            parent.scope.emit(handoff)
            await parent.set_status("awaiting_peer")
            child.governor.parent = parent.governor
            try:
                attachments = () if context.part is None else (context.part,)
                result = await child.send_message(request.task, attachments, author=parent.agent.id)
            except asyncio.CancelledError:
                # The parent's turn was aborted: the child's turn was aborted with it.
                parent.scope.emit(
                    handoff.model_copy(update={"returned": True, "stop_reason": "aborted"})
                )
                raise
            finally:
                child.governor.parent = None
                parent.governor.children_microcents = await store.run(
                    lambda s: s.descendants_cost(parent.id)
                )
            await parent.set_status("streaming")
            parent.scope.emit(
                handoff.model_copy(update={"returned": True, "stop_reason": result.stop_reason})
            )
        finally:
            self._running -= 1
        if result.stop_reason in ("stop", "length", "tool_use"):
            return DelegationOutcome(
                result.text or f"({child.agent.id} finished without a text answer)",
                child_session_id=child.id,
            )
        why = result.error.message if result.error is not None else result.stop_reason
        return DelegationOutcome(
            f"The {child.agent.id} agent did not finish the task ({why}). Its session is "
            f"{child.id}.",
            failed=True,
            child_session_id=child.id,
        )

    async def message_peer(self, request: PeerRequest) -> DelegationOutcome:
        """Send a peer message for the ``message_session`` tool (``engine/collab/peers.py``)."""
        parent = self._parent
        messenger = self._messenger
        try:
            to_session_id = await messenger.resolve(parent, request.to)
            message = await messenger.send(
                parent,
                [to_session_id],
                request.text,
                "await_reply" if request.await_reply else "fire_and_forget",
                call_id=request.call_id,
                from_turn=True,
            )
        except RelaviumError as error:
            return DelegationOutcome(error.message, failed=True)
        delivery = message.deliveries[0]
        if delivery.status == "replied":
            return DelegationOutcome(delivery.reply or "(no text in the reply)")
        if delivery.status == "delivered":
            return DelegationOutcome(
                f"Delivered to session {to_session_id}: it will see the message on its next turn."
            )
        why = delivery.error or delivery.status
        return DelegationOutcome(
            f"Session {to_session_id} did not take the message ({why}).", failed=True
        )

    async def _refusal(self, request: DelegationRequest) -> str | None:
        """Why this delegation may not start, or ``None``."""
        parent = self._parent
        store = parent.scope.store
        config = await self._live.workspace_config(parent.record.context.working_dir)
        if request.agent not in config.agents:
            known = ", ".join(sorted(config.agents))
            return f"There is no agent {request.agent!r} in this workspace (known: {known})."
        limits = config.delegation.for_agent(parent.agent.id)
        if limits.max_depth == 0:
            return f"The {parent.agent.id} agent may not delegate. Do the task yourself."
        depth = await store.run(lambda s: s.delegation_depth(parent.id))
        if depth + 1 > limits.max_depth:
            return (
                f"Delegation is limited to {limits.max_depth} levels; this session is already a "
                "delegated one. Do the task yourself."
            )
        if self._running >= limits.max_concurrent_children:
            return f"At most {limits.max_concurrent_children} delegated tasks may run at once."
        parent.governor.children_microcents = await store.run(
            lambda s: s.descendants_cost(parent.id)
        )
        if parent.governor.remaining_microcents() == 0:
            return "The session's cost cap is spent; a delegated task could not run."
        return None

    async def _asking_message(self, request: DelegationRequest) -> tuple[int, str | None]:
        """The parent's assistant message holding this ``delegate`` call, and the call's id."""
        parent_id = self._parent.id
        recent, _ = await self._parent.scope.store.run(
            lambda s: s.get_transcript(parent_id, limit=_RECENT_MESSAGES)
        )
        for message in reversed(recent):
            if message.role != "assistant":
                continue
            for part in message.content:
                if (
                    isinstance(part, ToolCallPart)
                    and part.name == DELEGATE_TOOL
                    and part.args.get("agent") == request.agent
                    and part.args.get("task") == request.task
                ):
                    return message.sequence_number, part.id
            return message.sequence_number, None
        return 0, None


def with_child_cap(config: WorkspaceConfig, cap: int) -> WorkspaceConfig:
    """A child's configuration: at most ``cap`` micro-cents, and a refusal past it."""
    configured = config.policy.max_cost_microcents
    limit = cap if configured is None else min(cap, configured)
    policy = config.policy.model_copy(update={"max_cost_microcents": limit, "on_exceed": "fail"})
    return dataclasses.replace(config, policy=policy)


async def reload_child(
    store: AsyncSessionStore, record: AgentSessionRecord, config: WorkspaceConfig
) -> WorkspaceConfig:
    """A delegated child loaded from the store: its stored cap again, and an audit row.

    The cap was what remained under the parent's when the child started; it is kept in the
    handoff row so a child resumed after a restart obeys it as it did before. Loading a
    child in a process that did not create it is a resume of its handoff, so it is audited.
    """
    if record.parent_session_id is None:
        return config
    child_id = record.id
    handoff = await store.run(lambda s: handoffs.child_handoff(s.connection, child_id))
    if handoff is None:
        return config
    detail = f"loaded from the store by process {os.getpid()}"
    await store.run(lambda s: handoffs.record_audit(s.connection, handoff, "resumed", detail))
    if handoff.cost_cap_microcents is None:
        return config
    return with_child_cap(config, handoff.cost_cap_microcents)


async def audit_replay(store: AsyncSessionStore, session_id: str, detail: str) -> None:
    """A replay of a session replays its handoffs (and the one that started it): audit each."""

    def record(s: SessionStore) -> None:
        connection = s.connection
        touched: list[HandoffRecord] = list(handoffs.list_handoffs(connection, session_id))
        own = handoffs.child_handoff(connection, session_id)
        if own is not None:
            touched.append(own)
        for handoff in touched:
            handoffs.record_audit(connection, handoff, "replayed", detail)

    await store.run(record)


def _title(request: DelegationRequest) -> str:
    first_line = request.task.strip().splitlines()[0] if request.task.strip() else request.agent
    if len(first_line) > _TITLE_CHARS:
        first_line = first_line[: _TITLE_CHARS - 1] + "…"
    return f"{request.agent}: {first_line}"
