"""Introspection checkpoints: the agent writes down what it knows and decided (§2.5).

``checkpoint`` runs one model call — the session's own chain, priced like any other call —
over the visible messages since the previous checkpoint, with the previous working memory as
its starting point. The answer is a one-line description (it becomes the session's
description, source ``introspection``) and the new working memory, which every later turn of
the session is given with its system prompt. The checkpoint itself is a ``session:checkpoint``
event: the durable log is its record, ``relavium/listIntrospections`` reads it back, and exports
carry it. Like compaction it holds the session's lease while it runs and is refused while a
turn runs.
"""

from __future__ import annotations

import re

from relavium_lsp.contracts.content import TextPart
from relavium_lsp.contracts.events import CheckpointReason, SessionCheckpoint
from relavium_lsp.contracts.memory import INTROSPECTION_REQUEST
from relavium_lsp.engine.memory.workspace import (
    INTROSPECTION_INSTRUCTIONS,
    introspection_context,
    keep_proposal,
    split_proposal,
)
from relavium_lsp.engine.sessions.session import AgentSession
from relavium_lsp.engine.turn.model_calls import CallFailed, CallRefused, answer_text
from relavium_lsp.errors import DomainErrorCode, RelaviumError, SessionBusy
from relavium_lsp.llm.projection import project_messages
from relavium_lsp.llm.seam import LlmMessage, LlmRequest
from relavium_lsp.store.rows.event_reads import latest_checkpoint

INSTRUCTIONS = (
    "You are checkpointing your own work in a long conversation with a user. Read the "
    "conversation since your last checkpoint and your working memory so far. Answer in exactly "
    "this form:\n"
    "DESCRIPTION: <one line, at most 120 characters: what this session is about>\n"
    "MEMORY:\n<concise notes you need later: goals, decisions and why, files and symbols, "
    "open questions, next steps; drop what no longer matters>"
)
REQUEST = INTROSPECTION_REQUEST
MAX_DESCRIPTION = 200
MAX_MEMORY = 8_000
_ANSWER = re.compile(
    r"DESCRIPTION:\s*(?P<description>.*?)\s*\n\s*MEMORY:\s*\n?(?P<memory>.*)", re.S
)


class CheckpointFailed(RelaviumError):
    """The model could not write the checkpoint (nothing was recorded)."""

    code: DomainErrorCode = "provider_unavailable"


class CheckpointRefused(CheckpointFailed):
    """The cost cap refused the checkpoint's model call (nothing was sent or recorded)."""

    code: DomainErrorCode = "budget_exceeded"


async def checkpoint(session: AgentSession, reason: CheckpointReason) -> SessionCheckpoint:
    """Run one introspection pass and record it (see the module doc)."""
    if session.busy:
        raise SessionBusy(f"session {session.id} is running a turn; checkpoint it afterwards")
    scope = session.scope
    leases = scope.leases
    token = None
    if leases is not None:
        token = leases.new_token()
        clock = leases.clock()
        try:
            await scope.hold_lease(token, clock)
        except BaseException:
            leases.drop_token(token)
            raise
    try:
        return await _checkpoint(session, reason)
    finally:
        if leases is not None and token is not None:
            await scope.give_back_lease(token)
            leases.drop_token(token)


async def checkpoint_held(session: AgentSession, reason: CheckpointReason) -> SessionCheckpoint:
    """One pass for a caller that already holds the session's lease (automatic triggers)."""
    return await _checkpoint(session, reason)


async def _checkpoint(session: AgentSession, reason: CheckpointReason) -> SessionCheckpoint:
    scope = session.scope
    previous = await scope.store.run(lambda s: latest_checkpoint(s.connection, session.id))
    since = previous.through_sequence if previous is not None else 0
    window = session.context_window()
    tail = await scope.store.run(lambda s: s.load_tail_within_budget(session.id, window))
    fresh = [message for message in tail if message.sequence_number > since]
    through = max((message.sequence_number for message in tail), default=since)
    memory_so_far = previous.working_memory if previous is not None else "(empty)"
    # The workspace's long-term memory (§2.6): shown, and updated from the answer's last part.
    working_dir = session.record.context.working_dir
    workspace_now = await introspection_context(scope.memory, working_dir)
    request = LlmRequest(
        model=session.chain[0].model,
        system=(
            f"{INSTRUCTIONS}{INTROSPECTION_INSTRUCTIONS}\n\nYour working memory so far:\n"
            f"{memory_so_far}{workspace_now}"
        ),
        messages=(
            *project_messages(fresh, scope.media),
            LlmMessage(role="user", content=(TextPart(text=REQUEST),)),
        ),
        tools=(),
    )
    answer, proposal = split_proposal(await _ask(session, request))
    description, memory = _parse(answer)
    # Kept for the user to accept, in no prompt until then (§2.6, issue 35).
    proposal_id = await keep_proposal(
        scope.memory, working_dir, proposal, session_id=session.id, reason=reason
    )
    # An automatic pass never replaces a description the user wrote (a manual one may).
    if reason == "manual" or session.record.description_source != "user":
        await scope.store.run(lambda s: s.set_description(session.id, description, "introspection"))
        session.record = session.record.model_copy(
            update={"description": description, "description_source": "introspection"}
        )
    event = SessionCheckpoint(
        reason=reason,
        through_sequence=through,
        description=description,
        working_memory=memory,
        memory_proposal_id=proposal_id,
    )
    scope.emit(event)
    await scope.flush_events()
    session.working_memory = memory
    return event


async def _ask(session: AgentSession, request: LlmRequest) -> str:
    try:
        text = await answer_text(session.governor, session.chain, request)
    except CallRefused as refused:
        raise CheckpointRefused(
            f"the checkpoint was not written: {refused.error.message}"
        ) from None
    except CallFailed as failure:
        raise CheckpointFailed(f"the model could not write the checkpoint: {failure}") from None
    if not text:
        raise CheckpointFailed("the model answered the checkpoint with nothing")
    return text


def _parse(answer: str) -> tuple[str, str]:
    """``(description, working memory)`` from the answer; lenient with a model off-format."""
    match = _ANSWER.search(answer)
    if match is not None:
        description = match.group("description").strip()
        memory = match.group("memory").strip()
    else:
        lines = [line.strip() for line in answer.splitlines() if line.strip()]
        description, memory = lines[0], answer
    description = " ".join(description.split())[:MAX_DESCRIPTION] or "(no description)"
    return description, memory[:MAX_MEMORY]
