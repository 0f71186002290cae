"""What a delegated child receives of its parent's conversation: the handoff input filter.

Seed 004: the boundary payload of a handoff is always explicit. The filter is chosen per
``delegate`` call (its ``input_filter`` / ``last_n`` / ``strip_tool_results`` arguments) over
the delegating agent's ``[delegation]`` configuration; the default, ``task_only``, hands over
the task alone. Otherwise the parent's visible messages before the asking message become one
text part of the child's task message — rendered as a plain, attributed transcript, never as
the child's own history, so the child cannot mistake the parent's tool calls for its own —
and the filter and the message count are stored in the handoff row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from relavium_lsp.contracts.content import (
    DurableMediaPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.delegation import MAX_LAST_N, DelegationLimits, HandoffInputFilter
from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.tools.base import DelegationRequest

# The handed-over transcript is bounded: the newest messages win, the oldest are cut.
MAX_CONTEXT_CHARS = 60_000
_MAX_ARGS_CHARS = 500
_MAX_RESULT_CHARS = 2_000
CONTEXT_HEADER = "Context handed over from"


@dataclass(frozen=True)
class HandoffContext:
    """The filter that applied, the text part it produced (if any) and how many messages."""

    input_filter: HandoffInputFilter
    part: TextPart | None
    messages: int


def resolve_filter(limits: DelegationLimits, request: DelegationRequest) -> HandoffInputFilter:
    """The call's own choices over the delegating agent's configured ones."""
    kind = request.input_filter or limits.input_filter
    last_n = request.last_n or limits.input_last_n
    strip = (
        request.strip_tool_results
        if request.strip_tool_results is not None
        else limits.strip_tool_results
    )
    return HandoffInputFilter(
        kind=kind,
        last_n=last_n if kind == "last_n" else None,
        strip_tool_results=strip,
    )


async def gather_context(
    store: AsyncSessionStore,
    session_id: str,
    *,
    before_sequence: int,
    from_agent: str,
    input_filter: HandoffInputFilter,
) -> HandoffContext:
    """Read what the filter hands over of ``session_id`` (messages before the asking one)."""
    if input_filter.kind == "task_only":
        return HandoffContext(input_filter, None, 0)
    limit = MAX_LAST_N
    if input_filter.kind == "last_n" and input_filter.last_n is not None:
        limit = input_filter.last_n
    before = before_sequence if before_sequence > 0 else None
    messages, _ = await store.run(
        lambda s: s.get_transcript(session_id, before_sequence=before, limit=limit)
    )
    lines = render(messages, strip_tool_results=input_filter.strip_tool_results)
    if not lines:
        return HandoffContext(input_filter, None, 0)
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        if size + len(line) > MAX_CONTEXT_CHARS:
            kept.append("[… older messages cut]")
            break
        kept.append(line)
        size += len(line) + 2
    described = describe(input_filter)
    header = (
        f"{CONTEXT_HEADER} the {from_agent} agent's conversation "
        f"({len(messages)} messages, {described}):"
    )
    text = "\n\n".join([header, *reversed(kept)])
    return HandoffContext(input_filter, TextPart(text=text), len(messages))


def describe(input_filter: HandoffInputFilter) -> str:
    """``last_n(10), tool results stripped`` — the filter in a few words."""
    name = (
        f"last_n({input_filter.last_n})"
        if input_filter.kind == "last_n" and input_filter.last_n
        else input_filter.kind
    )
    return f"{name}, tool results stripped" if input_filter.strip_tool_results else name


def render(messages: Sequence[SessionMessage], *, strip_tool_results: bool) -> list[str]:
    """One attributed block per message; system rows (notes, markers) are left out."""
    names: dict[str, str] = {}
    lines: list[str] = []
    for message in messages:
        if message.role == "system":
            continue
        pieces: list[str] = []
        for part in message.content:
            if isinstance(part, TextPart) and part.text.strip():
                pieces.append(part.text.strip())
            elif isinstance(part, ToolCallPart):
                names[part.id] = part.name
                args = json.dumps(part.args, ensure_ascii=False)
                pieces.append(f"(calls {part.name} {_cut(args, _MAX_ARGS_CHARS)})")
            elif isinstance(part, ToolResultPart) and not strip_tool_results:
                name = names.get(part.tool_call_id, "a tool")
                failed = " (failed)" if part.is_error else ""
                pieces.append(f"({name} returned{failed}: {_cut(part.result, _MAX_RESULT_CHARS)})")
            elif isinstance(part, DurableMediaPart):
                pieces.append("(an image or file, not handed over)")
        if pieces:
            lines.append(f"[{_speaker(message)}] " + "\n".join(pieces))
    return lines


def _speaker(message: SessionMessage) -> str:
    if message.role == "assistant":
        return f"assistant {message.agent_slug}" if message.agent_slug else "assistant"
    if message.role == "tool":
        return "tool"
    return f"from {message.agent_slug}" if message.agent_slug else "user"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
