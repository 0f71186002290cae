"""The recordings a replay runs against, built from a session's own transcript.

- **Provider cassette**: every assistant message was one provider call, so it becomes one
  :class:`~relavium_lsp.llm.cassette.RecordedCall` whose chunks stream the message back —
  reasoning blocks, the text, the tool calls, then ``stop`` (``tool_use`` when it called
  tools). Replayed with ``match="sequence"``, call *n* of the replay gets recording *n*.
  Reasoning blocks end with an empty signature: that is what closes a block in the engine,
  so two consecutive blocks stay two parts (the durable form drops it again).
- **Tool cassette**: every ``tool_result`` part by the id of the call it answers.
  :class:`ReplayToolDispatcher` serves calls from it; with ``live_tools`` a tool whose
  replay class is ``pure`` or ``read-only`` runs for real instead, and side-effecting tools
  always come from the recording — a replay never writes, runs or sends anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from relavium_lsp.contracts.content import (
    DurableMediaPart,
    DurableReasoningPart,
    MediaPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.events import AgentToolResult, TokenUsage
from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.export.turns import LogicalTurn
from relavium_lsp.llm.cassette import CASSETTE_FORMAT, RecordedCall
from relavium_lsp.llm.seam import (
    LlmChunk,
    ReasoningDelta,
    StopChunk,
    TextDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolSpec,
)
from relavium_lsp.tools.base import ToolAnswer, ToolCallContext, ToolSelection
from relavium_lsp.tools.bounding import summarize_output
from relavium_lsp.tools.registry import ToolRegistry, tool_call_event

LIVE_REPLAY_CLASSES = frozenset({"pure", "read-only"})
NO_RECORDING = "Error: the replay has no recorded result for this tool call."


def message_chunks(message: SessionMessage) -> list[LlmChunk]:
    """The chunk stream that makes the engine persist ``message`` again."""
    chunks: list[LlmChunk] = []
    calls = [part for part in message.content if isinstance(part, ToolCallPart)]
    for part in message.content:
        if isinstance(part, DurableReasoningPart):
            signature = None if part.redacted else ""
            chunks.append(
                ReasoningDelta(text=part.text, signature=signature, redacted=part.redacted)
            )
    text = "".join(part.text for part in message.content if isinstance(part, TextPart))
    if text:
        chunks.append(TextDelta(text=text))
    for index, call in enumerate(calls):
        chunks.append(ToolCallStart(index=index, id=call.id, name=call.name))
        chunks.append(ToolCallEnd(index=index, id=call.id, name=call.name, args=call.args))
    chunks.append(StopChunk(stop_reason="tool_use" if calls else "stop", usage=TokenUsage()))
    return chunks


def provider_cassette(turns: Sequence[LogicalTurn]) -> dict[str, Any]:
    """A ``relavium-cassette/1`` document: one recorded call per assistant message, in order."""
    calls: list[RecordedCall] = []
    for turn in turns:
        prompt = turn.prompt_text()
        called: list[str] = []
        for message in turn.answers:
            if message.role != "assistant":
                continue
            summary = {"key": "", "model": message.model_id or "", "prompt": prompt}
            calls.append(
                RecordedCall(
                    request={**summary, "tools_called": list(called)},
                    chunks=tuple(message_chunks(message)),
                )
            )
            called.extend(part.name for part in message.content if isinstance(part, ToolCallPart))
    return {"format": CASSETTE_FORMAT, "calls": [call.to_json() for call in calls]}


def tool_cassette(messages: Iterable[SessionMessage]) -> dict[str, ToolAnswer]:
    """Every recorded tool result (with the media beside it), by the id of the call."""
    answers: dict[str, ToolAnswer] = {}
    for message in messages:
        if message.role != "tool":
            continue
        media = tuple(
            MediaPart(mime_type=part.mime_type, source=part.source, name=part.name)
            for part in message.content
            if isinstance(part, DurableMediaPart)
        )
        for part in message.content:
            if isinstance(part, ToolResultPart):
                answers[part.tool_call_id] = ToolAnswer(part, media)
    return answers


@dataclass
class ReplayCounters:
    """How the replay's tool calls were served."""

    live: int = 0
    recorded: int = 0
    missing: int = 0


class ReplayToolDispatcher:
    """A :class:`~relavium_lsp.tools.base.ToolDispatcher` that answers from the tool cassette."""

    def __init__(
        self,
        registry: ToolRegistry,
        recordings: dict[str, ToolAnswer],
        *,
        live_tools: bool = False,
    ) -> None:
        self._registry = registry
        self._recordings = recordings
        self._live_tools = live_tools
        self.counters = ReplayCounters()

    def specs(self, names: Iterable[str]) -> list[ToolSpec]:
        """The same specs the original session offered its model."""
        return self._registry.specs(names)

    async def select(self, entries: Sequence[str], ctx: ToolCallContext) -> ToolSelection:
        """The built-ins the original offered (MCP calls always come from the recording)."""
        return await self._registry.select(entries, ctx)

    async def dispatch(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolAnswer:
        """Run a ``pure``/``read-only`` tool live if allowed, else replay the recording."""
        definition = self._registry.get(call.name)
        if self._live_tools and definition is not None:
            if definition.replay in LIVE_REPLAY_CLASSES:
                self.counters.live += 1
                return await self._registry.dispatch(call, ctx)
        ctx.emit(tool_call_event(call, definition, ctx.model))
        recorded = self._recordings.get(call.id)
        if recorded is None:
            self.counters.missing += 1
            answer = ToolAnswer(
                ToolResultPart(tool_call_id=call.id, result=NO_RECORDING, is_error=True)
            )
        else:
            self.counters.recorded += 1
            answer = recorded
        result = answer.result
        ctx.emit(
            AgentToolResult(
                tool_id=call.name,
                call_id=call.id,
                success=not result.is_error,
                output_summary=summarize_output(result.result),
                duration_ms=0,
                error_code="tool_unavailable" if recorded is None else None,
            )
        )
        return answer
