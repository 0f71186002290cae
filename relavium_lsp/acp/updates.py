"""Engine events → ACP ``session/update`` notifications, and settled turns → stop reasons.

==========================  ==================================================================
engine event                ``session/update``
==========================  ==================================================================
``agent:token``             ``agent_message_chunk``
``agent:reasoning``         ``agent_thought_chunk``
``agent:tool_call``         ``tool_call`` (``pending``; title, kind, jail-checked locations)
``agent:tool_result``       ``tool_call_update``: ``in_progress`` first if the client was not
                            told yet, then ``completed`` / ``failed`` with the output summary
                            (and the ``diff`` of an applied write)
``agent:tool_output``       ``tool_call_update`` of a running ``run_command``: ``in_progress``
                            with the output so far as text content (``content`` replaces,
                            so each update carries the whole stream; the events are already
                            throttled and capped per call)
``cost:updated``            ``usage_update`` (tokens of the last call, context size, cost)
``agent:plan_updated``      ``plan`` (the whole list of entries; resume and load send the
                            current plan too)
==========================  ==================================================================

Everything else is either carried by the prompt's answer (``turn_completed``) or has no ACP
counterpart. Raw tool input is the event's sanitized form: contents are never resent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    ContentToolCallContent,
    Cost,
    FileEditToolCallContent,
    PlanEntry,
    PromptResponse,
    SessionInfo,
    SessionInfoUpdate,
    StopReason,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    Usage,
    UsageUpdate,
)

from relavium_lsp.acp.errors import turn_error
from relavium_lsp.acp.outbox import SessionUpdate
from relavium_lsp.acp.tool_calls import CallBook, describe_call
from relavium_lsp.contracts.events import (
    AgentReasoning,
    AgentToken,
    AgentToolCall,
    AgentToolResult,
    CostUpdated,
    StampedEvent,
    TurnCompleted,
    TurnError,
    TurnResult,
)
from relavium_lsp.contracts.plan import AgentPlanUpdated
from relavium_lsp.contracts.plan import PlanEntry as OurPlanEntry
from relavium_lsp.contracts.session import SessionSummary
from relavium_lsp.contracts.terminal import AgentToolOutput

MICROCENTS_PER_DOLLAR = 100_000_000
MAX_TITLE_CHARS = 80
ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
# Tools whose live ``agent:tool_output`` is shown in their own call's content.
LIVE_OUTPUT_TOOLS = frozenset({"run_command"})
_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_use": "end_turn",
    "length": "max_tokens",
    "content_filter": "refusal",
    "aborted": "cancelled",
}
_ERROR_STOP_REASONS: dict[str, StopReason] = {
    "turn_limit": "max_turn_requests",
    "content_filter": "refusal",
    "cancelled": "cancelled",
}


def text_content(text: str) -> ContentToolCallContent:
    """Plain text as tool call content."""
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def message_chunk(text: str, message_id: str | None = None) -> AgentMessageChunk:
    """An ``agent_message_chunk`` of text."""
    return AgentMessageChunk(
        session_update="agent_message_chunk",
        content=TextContentBlock(type="text", text=text),
        message_id=message_id,
    )


def thought_chunk(text: str, message_id: str | None = None) -> AgentThoughtChunk:
    """An ``agent_thought_chunk`` of text."""
    return AgentThoughtChunk(
        session_update="agent_thought_chunk",
        content=TextContentBlock(type="text", text=text),
        message_id=message_id,
    )


def status_update(call_id: str, status: Any) -> ToolCallProgress:
    """A ``tool_call_update`` that only changes the status."""
    return ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, status=status)


class EventMapper:
    """Maps one connection's engine events to the updates its client receives."""

    def __init__(self, book: CallBook, context_window: Callable[[str], int | None]) -> None:
        self._book = book
        self._context_window = context_window
        # Live output so far of running calls, by (session id, call id).
        self._live: dict[tuple[str, str], str] = {}

    def map(self, event: StampedEvent) -> list[SessionUpdate]:
        """The updates for one event (often none)."""
        payload = event.payload
        if isinstance(payload, AgentToken):
            return [message_chunk(payload.token)] if payload.token else []
        if isinstance(payload, AgentReasoning):
            return [thought_chunk(payload.text)] if payload.text else []
        if isinstance(payload, AgentToolCall):
            return [self._tool_call(event.session_id, payload)]
        if isinstance(payload, AgentToolOutput):
            return self._tool_output(event.session_id, payload)
        if isinstance(payload, AgentToolResult):
            return self._tool_result(event.session_id, payload)
        if isinstance(payload, CostUpdated):
            return [self._usage(event.session_id, payload)]
        if isinstance(payload, AgentPlanUpdated):
            return [plan_update(payload.entries)]
        if isinstance(payload, TurnCompleted):
            self._book.forget_session(event.session_id)
            for key in [key for key in self._live if key[0] == event.session_id]:
                del self._live[key]
        return []

    def _tool_call(self, session_id: str, payload: AgentToolCall) -> ToolCallStart:
        record = self._book.get(session_id, payload.call_id)
        if record is not None:
            description = record.description
        else:
            description = describe_call(payload.tool_id, payload.tool_input, None)
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=payload.call_id,
            title=description.title,
            kind=description.kind,
            status="pending",
            locations=list(description.locations) or None,
            raw_input=payload.tool_input,
        )

    def _tool_output(self, session_id: str, payload: AgentToolOutput) -> list[SessionUpdate]:
        if payload.tool_id not in LIVE_OUTPUT_TOOLS or not payload.text:
            return []
        key = (session_id, payload.call_id)
        text = self._live.get(key, "") + payload.text
        self._live[key] = text
        record = self._book.get(session_id, payload.call_id)
        if record is not None:
            # The status below tells the client the call runs; the result need not repeat it.
            record.started = True
        return [
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=payload.call_id,
                status="in_progress",
                content=[text_content(text)],
            )
        ]

    def _tool_result(self, session_id: str, payload: AgentToolResult) -> list[SessionUpdate]:
        record = self._book.close(session_id, payload.call_id)
        streamed = self._live.pop((session_id, payload.call_id), None) is not None
        updates: list[SessionUpdate] = []
        if not streamed and (record is None or not record.started):
            updates.append(status_update(payload.call_id, "in_progress"))
        content: list[ToolContent] = []
        if payload.success and record is not None and record.diff is not None:
            content.append(record.diff)
        if payload.output_summary:
            content.append(text_content(payload.output_summary))
        raw_output: dict[str, Any] = {"success": payload.success, "durationMs": payload.duration_ms}
        if payload.error_code is not None:
            raw_output["errorCode"] = payload.error_code
        updates.append(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=payload.call_id,
                status="completed" if payload.success else "failed",
                content=content or None,
                raw_output=raw_output,
            )
        )
        return updates

    def _usage(self, session_id: str, payload: CostUpdated) -> UsageUpdate:
        used = payload.input_tokens + payload.output_tokens
        size = self._context_window(session_id) or used
        cost = None
        if payload.priced or payload.cumulative_cost_microcents:
            cost = Cost(
                amount=payload.cumulative_cost_microcents / MICROCENTS_PER_DOLLAR, currency="USD"
            )
        return UsageUpdate(session_update="usage_update", used=used, size=size, cost=cost)


def plan_update(entries: list[OurPlanEntry]) -> AgentPlanUpdate:
    """The stable ``plan`` session update: the whole list (an empty list clears it)."""
    return AgentPlanUpdate(
        session_update="plan",
        entries=[
            PlanEntry(content=entry.content, priority=entry.priority, status=entry.status)
            for entry in entries
        ],
    )


def prompt_response(result: TurnResult) -> PromptResponse:
    """The answer to ``session/prompt`` for a settled turn; raises for real failures.

    ``turn_limit`` is ``max_turn_requests``, a content filter is a ``refusal``, an aborted
    turn is ``cancelled``; any other error is a JSON-RPC error carrying its typed code.
    """
    if result.stop_reason == "error":
        error = result.error or TurnError(code="internal", message="The turn failed.")
        reason = _ERROR_STOP_REASONS.get(error.code)
        if reason is None:
            raise turn_error(error)
    else:
        reason = _STOP_REASONS[result.stop_reason]
    tokens = result.tokens_used
    usage = Usage(
        total_tokens=tokens.input_tokens + tokens.output_tokens,
        input_tokens=tokens.input_tokens,
        output_tokens=tokens.output_tokens,
    )
    return PromptResponse(stop_reason=reason, usage=usage)


def title_from_prompt(text: str) -> str | None:
    """A session title from the first prompt: its first non-empty line, shortened."""
    for line in text.splitlines():
        words = " ".join(line.split())
        if words:
            if len(words) <= MAX_TITLE_CHARS:
                return words
            return words[: MAX_TITLE_CHARS - 1].rstrip() + "…"
    return None


def title_update(title: str, updated_at: str) -> SessionInfoUpdate:
    """A ``session_info_update`` carrying the session's title."""
    return SessionInfoUpdate(
        session_update="session_info_update", title=title, updated_at=updated_at
    )


def session_info(summary: SessionSummary) -> SessionInfo:
    """One ``session/list`` entry (our status, agent and size ride in ``_meta.relavium``)."""
    return SessionInfo(
        session_id=summary.id,
        cwd=summary.working_dir,
        title=summary.title,
        updated_at=summary.updated_at,
        field_meta={
            "relavium": {
                "status": summary.status,
                "agentRef": summary.agent_ref,
                "messageCount": summary.message_count,
            }
        },
    )
