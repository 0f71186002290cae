"""A stored transcript → the ``session/update`` notifications that rebuild it (``session/load``).

User text is ``user_message_chunk``; assistant text and (unredacted) reasoning are
``agent_message_chunk`` / ``agent_thought_chunk`` tagged with the stored message id; each
tool call is a ``tool_call`` followed by the ``tool_call_update`` of its result. A call whose
result never arrived (a turn a crash cut short) ends as ``failed``. System rows (compaction
and interruption markers, summaries) are the engine's bookkeeping and are not replayed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from acp.schema import TextContentBlock, ToolCallProgress, ToolCallStart, UserMessageChunk

from relavium_lsp.acp.outbox import SessionUpdate
from relavium_lsp.acp.tool_calls import CallDescription
from relavium_lsp.acp.updates import message_chunk, status_update, text_content, thought_chunk
from relavium_lsp.contracts.content import (
    DurableMediaPart,
    DurableReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.tools.bounding import summarize_output

Describer = Callable[[str, dict[str, Any]], CallDescription]
Sanitizer = Callable[[str, dict[str, Any]], dict[str, Any]]


def _user_updates(message: SessionMessage) -> list[SessionUpdate]:
    updates: list[SessionUpdate] = []
    for part in message.content:
        if isinstance(part, TextPart) and part.text:
            text = part.text
        elif isinstance(part, DurableMediaPart):
            text = f"[{part.mime_type} attachment{': ' + part.name if part.name else ''}]"
        else:
            continue
        updates.append(
            UserMessageChunk(
                session_update="user_message_chunk",
                content=TextContentBlock(type="text", text=text),
                message_id=message.id,
            )
        )
    return updates


def replay_updates(
    messages: Sequence[SessionMessage], *, describe: Describer, sanitize: Sanitizer
) -> list[SessionUpdate]:
    """The updates that replay ``messages`` (oldest first) to a client."""
    updates: list[SessionUpdate] = []
    unanswered: list[str] = []
    for message in messages:
        if message.role == "user":
            updates.extend(_user_updates(message))
        elif message.role == "assistant":
            for part in message.content:
                if isinstance(part, TextPart) and part.text:
                    updates.append(message_chunk(part.text, message.id))
                elif isinstance(part, DurableReasoningPart) and part.text and not part.redacted:
                    updates.append(thought_chunk(part.text, message.id))
                elif isinstance(part, ToolCallPart):
                    description = describe(part.name, part.args)
                    updates.append(
                        ToolCallStart(
                            session_update="tool_call",
                            tool_call_id=part.id,
                            title=description.title,
                            kind=description.kind,
                            status="pending",
                            locations=list(description.locations) or None,
                            raw_input=sanitize(part.name, part.args),
                        )
                    )
                    unanswered.append(part.id)
        elif message.role == "tool":
            for part in message.content:
                if isinstance(part, ToolResultPart):
                    if part.tool_call_id in unanswered:
                        unanswered.remove(part.tool_call_id)
                    updates.append(
                        ToolCallProgress(
                            session_update="tool_call_update",
                            tool_call_id=part.tool_call_id,
                            status="failed" if part.is_error else "completed",
                            content=[text_content(summarize_output(part.result))],
                        )
                    )
    updates.extend(status_update(call_id, "failed") for call_id in unanswered)
    return updates
