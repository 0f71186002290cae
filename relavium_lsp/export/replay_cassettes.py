"""The recordings a replay runs against, built from a session's own transcript.

- **Provider cassette**: every assistant message was one provider call, so it becomes one
  :class:`~relavium_lsp.llm.cassette.RecordedCall` whose chunks stream the message back —
  reasoning blocks, the text, the tool calls, then ``stop`` (``tool_use`` when it called
  tools). Replayed with ``match="sequence"``, call *n* of the replay gets recording *n*.
  Reasoning blocks end with an empty signature: that is what closes a block in the engine,
  so two consecutive blocks stay two parts (the durable form drops it again).
- **Tool cassette** (:mod:`relavium_lsp.export.tool_cassette`): every recorded tool call by
  its id. :class:`ReplayToolDispatcher` serves calls from it, or runs a tool live when the
  replay's tool replay mode allows it for that tool's side-effect class
  (:func:`runs_live`; the table is in :mod:`relavium_lsp.contracts.replay`). A
  side-effecting tool never runs: a replay never writes, runs or sends anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from relavium_lsp.contracts.content import (
    DurableReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.events import AgentToolResult, TokenUsage
from relavium_lsp.contracts.replay import ToolReplayMode
from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.export.tool_cassette import ToolCassette
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
from relavium_lsp.tools.base import ReplayClass, ToolAnswer, ToolCallContext, ToolSelection
from relavium_lsp.tools.bounding import summarize_output
from relavium_lsp.tools.registry import ToolRegistry, tool_call_event

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


def runs_live(
    replay_class: ReplayClass, mode: ToolReplayMode, name: str, chosen: frozenset[str]
) -> bool:
    """Whether a replay in ``mode`` runs this tool for real (``chosen``: ``mixed``'s tools)."""
    if replay_class == "side-effecting" or mode == "recorded":
        return False
    if mode == "auto":
        return replay_class in ("pure", "read-only")
    if mode == "live":
        return True
    return name in chosen


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
        cassette: ToolCassette,
        *,
        mode: ToolReplayMode = "recorded",
        live_tools: frozenset[str] = frozenset(),
    ) -> None:
        self._registry = registry
        self._cassette = cassette
        self._mode = mode
        self._live_tools = live_tools
        self.counters = ReplayCounters()

    def specs(self, names: Iterable[str]) -> list[ToolSpec]:
        """The same specs the original session offered its model."""
        return self._registry.specs(names)

    async def select(self, entries: Sequence[str], ctx: ToolCallContext) -> ToolSelection:
        """The built-ins the original offered (MCP calls always come from the recording)."""
        return await self._registry.select(entries, ctx)

    async def dispatch(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolAnswer:
        """Run the tool live if the mode allows it for its class, else replay the recording."""
        definition = self._registry.get(call.name)
        if definition is not None and runs_live(
            definition.replay, self._mode, call.name, self._live_tools
        ):
            self.counters.live += 1
            return await self._registry.dispatch(call, ctx)
        ctx.emit(tool_call_event(call, definition, ctx.model))
        recorded = self._cassette.calls.get(call.id)
        if recorded is None:
            self.counters.missing += 1
            answer = ToolAnswer(
                ToolResultPart(tool_call_id=call.id, result=NO_RECORDING, is_error=True)
            )
        else:
            self.counters.recorded += 1
            answer = ToolAnswer(*recorded.answer())
        result = answer.result
        ctx.emit(
            AgentToolResult(
                tool_id=call.name,
                call_id=call.id,
                success=not result.is_error,
                output_summary=summarize_output(result.result),
                # The time the call took when it was recorded (0 when nothing recorded it).
                duration_ms=(recorded.duration_ms or 0) if recorded is not None else 0,
                error_code="tool_unavailable" if recorded is None else None,
            )
        )
        return answer
