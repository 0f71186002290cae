"""Building the fixed inputs of a turn: prompt, history within budget, tools, tool context.

A plan is derived from a :class:`~relavium_lsp.engine.snapshot.SessionSnapshot` (the session as
it is when the turn starts) and the session's :class:`~relavium_lsp.engine.scope.SessionScope`
(what the turn may use); it never holds the live session object.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path

from relavium_lsp.contracts.content import ContentPart, DurableReasoningPart, ReasoningPart
from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.engine.checkpoint_journal import TurnJournal
from relavium_lsp.engine.prompt import render_prompt, selection_excerpt
from relavium_lsp.engine.scope import SessionScope
from relavium_lsp.engine.snapshot import SessionSnapshot
from relavium_lsp.engine.turn import TurnPlan
from relavium_lsp.engine.workspace_memory import prompt_block
from relavium_lsp.llm.projection import project_messages
from relavium_lsp.store.sessions import SessionStore
from relavium_lsp.store.tail_walk import TailWalk
from relavium_lsp.tools.base import ToolCallContext

# Room kept free in the context window for the answer when the agent sets no max_tokens.
DEFAULT_OUTPUT_RESERVE = 4_096
MAX_SELECTION_BYTES = 512 * 1024


def history_ceiling(session: SessionSnapshot) -> int:
    """The largest history budget a turn of ``session`` can have (before its prompt is known)."""
    reserve = session.agent.max_tokens or DEFAULT_OUTPUT_RESERVE
    return max(1_024, session.context_window - reserve)


def walk_for_turn(store: SessionStore, session_id: str, ceiling: int) -> TailWalk | None:
    """The turn's tail walk, read in its first store trip; None if reading it failed.

    Then the plan reads the tail itself, where a failure (a damaged row) fails the turn
    after its user message is committed, so the turn is rolled back as it always was.
    """
    try:
        return store.walk_tail(session_id, ceiling)
    except Exception:
        return None


async def plan_turn(
    scope: SessionScope,
    session: SessionSnapshot,
    *,
    user_sequence: int | None = None,
    walk: TailWalk | None = None,
) -> TurnPlan:
    """Build the plan for a turn whose user message (``user_sequence``) is persisted.

    With ``user_sequence`` the tools keep file checkpoints against that message (§6.3).
    ``walk``: the history rows read with the user message, for :func:`history_ceiling`; the
    tail is chosen from them without another trip to the store when it can be.
    """
    agent = session.agent
    tool_context = ToolCallContext(
        session_id=session.id,
        context=session.record.context,
        policy=session.policy,
        host=scope.host,
        emit=scope.emit,
        ask_user=scope.ask_user,
        artifacts=scope.store,
        model=session.model,
        allowed_tools=frozenset(agent.tools),
        temp_dir=scope.temp_dir,
        approvals=scope.approvals,
        session_title=session.record.title,
        protected_paths=scope.protected_paths,
        journal=None
        if user_sequence is None
        else TurnJournal(scope.store, session.id, user_sequence),
        delegator=scope.delegator,
    )
    # Resolving may start MCP servers (or ask to trust a project's): it is the turn's work.
    selection = await scope.tools.select(agent.tools, tool_context)
    tool_context.allowed_tools = selection.allowed
    tool_context.turn_tools = selection.turn_tools
    tools = selection.specs
    system = await system_prompt(scope, session)
    reserve = agent.max_tokens or DEFAULT_OUTPUT_RESERVE
    overhead = len(system) // 4 + sum(len(str(spec.parameters)) // 4 for spec in tools)
    budget = max(1_024, session.context_window - reserve - overhead)
    history = walk.within(budget) if walk is not None else None
    if history is None:
        history = await scope.store.run(lambda s: s.load_tail_within_budget(session.id, budget))
    return TurnPlan(
        chain=session.chain,
        system=system,
        history=project_messages(
            history, scope.media, in_flight=await signed_reasoning(scope, history)
        ),
        tools=tools,
        temperature=agent.temperature,
        max_tokens=agent.max_tokens,
        max_tool_turns=session.policy.max_tool_turns,
        tool_context=tool_context,
        agent_slug=agent.id,
        user_sequence=user_sequence or 0,
        context_window=session.context_window if session.context_window_known else None,
        output_reserve=reserve,
        compact_threshold=session.policy.compact_threshold,
    )


async def signed_reasoning(
    scope: SessionScope, history: Sequence[SessionMessage]
) -> dict[str, list[ContentPart]] | None:
    """The history's reasoning with the signatures kept beside it, by message id (§5).

    Providers want their reasoning state back on later turns too (Responses' encrypted
    reasoning, Gemini's thought signatures, Anthropic's signed thinking); the durable
    content cannot hold it, so it is read from where the turn kept it. ``None`` when the
    history has no reasoning (no trip to the store).
    """
    wanted = [
        message.id
        for message in history
        if message.role == "assistant"
        and any(isinstance(part, DurableReasoningPart) for part in message.content)
    ]
    if not wanted:
        return None
    kept = await scope.store.run(lambda s: s.reasoning_signatures(wanted))
    if not kept:
        return None
    signed: dict[str, list[ContentPart]] = {}
    for message in history:
        signatures = kept.get(message.id)
        if signatures is None:
            continue
        position = 0
        parts: list[ContentPart] = []
        for part in message.content:
            if isinstance(part, DurableReasoningPart):
                signature = signatures[position] if position < len(signatures) else None
                position += 1
                parts.append(
                    ReasoningPart(text=part.text, signature=signature, redacted=part.redacted)
                )
            else:
                parts.append(part)  # type: ignore[arg-type]  # media is resolved by projection
        signed[message.id] = parts
    return signed


async def system_prompt(scope: SessionScope, session: SessionSnapshot) -> str:
    """The agent's prompt for this session, plus the selected lines when there are any."""
    context = session.record.context
    prompt = render_prompt(session.agent.system_prompt, context)
    workspace_memory = prompt_block(session.workspace_memory, session.context_window)
    if workspace_memory:
        prompt = f"{prompt}\n\n{workspace_memory}"
    if session.working_memory:
        memory = session.working_memory
        prompt = f"{prompt}\n\nYour working memory (from your last checkpoint):\n{memory}"
    selection = context.selection
    if selection is None:
        return prompt
    text = await _selected_file_text(scope, context.working_dir, selection.file)
    if text is None:
        return prompt
    excerpt = selection_excerpt(text, selection.start_line, selection.end_line)
    return (
        f"{prompt}\n\nThe user selected lines {selection.start_line}-{selection.end_line} "
        f"of {selection.file}:\n```\n{excerpt}\n```"
    )


async def _selected_file_text(scope: SessionScope, working_dir: str, file: str) -> str | None:
    """The selected file's text (open buffer first), only if it lies in the workspace."""
    root = os.path.realpath(working_dir)
    path = Path(os.path.realpath(Path(root, file)))
    if not path.is_relative_to(root):
        return None
    buffer = await scope.host.read_open_buffer(path)
    if buffer is not None:
        return buffer
    return await asyncio.to_thread(_read_small_text, path)


def _read_small_text(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_SELECTION_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
