"""Messages API stream events → seam chunks.

- ``message_start`` → input usage: ``input_tokens`` (uncached), ``cache_creation_input_tokens``
  (cache writes) and ``cache_read_input_tokens`` (cache reads) add up to the prompt;
- ``content_block_start``/``_delta``/``_stop`` → text, reasoning and tool-call chunks. A
  thinking block's ``signature_delta`` is held until the block stops and then sent on one
  final empty :class:`ReasoningDelta`; a ``redacted_thinking`` block becomes one
  ``ReasoningDelta(text="", signature=<data>, redacted=True)``. Tool calls are numbered
  0, 1, … in the order they start, like Chat Completions indices.
- ``message_delta`` → stop reason and cumulative usage; ``message_stop`` → the
  :class:`StopChunk`; ``ping`` is ignored; ``error`` → an :class:`ErrorChunk` by error type.

A block still open at ``message_stop`` (the model hit ``max_tokens`` inside a ``tool_use``
block, say) is closed there: a half-made tool call ends with an ``args_error`` so the model
is told its call was cut off. A body that ends after ``message_delta`` carried a stop reason
but before ``message_stop`` completes the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from relavium_lsp.contracts.base import compact_json
from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.event_stream import EventStreamDecoder
from relavium_lsp.llm.fast_events import messages_text
from relavium_lsp.llm.http_call import in_stream_error
from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmChunk,
    LlmError,
    LlmStopReason,
    ReasoningDelta,
    StopChunk,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    new_text_delta,
)
from relavium_lsp.llm.sse import EventData
from relavium_lsp.llm.wire_common import (
    checked_tool_call_id,
    checked_tool_name,
    parse_tool_arguments,
)

_STOP_REASONS: dict[str, LlmStopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_use",
    "refusal": "content_filter",
}
CUT_OFF_CALL = (
    "the model reached its output limit before finishing this call's arguments; "
    "make the call again with complete arguments"
)


@dataclass
class _Block:
    kind: str
    tool_index: int = -1
    tool_id: str = ""
    tool_name: str = ""
    json_parts: list[str] = field(default_factory=list)
    signature: str | None = None
    name_error: str | None = None


@dataclass
class _StreamState:
    uncached_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    stop_reason: str | None = None
    blocks: dict[int, _Block] = field(default_factory=dict)
    tool_count: int = 0
    finished: bool = False
    # No more events are read once a final chunk was made (stop, error or malformed).
    ended: bool = False

    @property
    def usage(self) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.uncached_tokens + self.cache_read_tokens + self.cache_write_tokens,
            output_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens,
        )

    def take_usage(self, usage: dict[str, Any]) -> None:
        """Fold a ``usage`` object in (each field, when present, is cumulative)."""
        for key, attribute in _USAGE_FIELDS:
            value = usage.get(key)
            if type(value) is int and value >= 0:
                setattr(self, attribute, value)


_USAGE_FIELDS = (
    ("input_tokens", "uncached_tokens"),
    ("cache_read_input_tokens", "cache_read_tokens"),
    ("cache_creation_input_tokens", "cache_write_tokens"),
    ("output_tokens", "output_tokens"),
)


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _tool_end(block: _Block, cut_off: str | None = None) -> ToolCallEnd:
    args, error = parse_tool_arguments("".join(block.json_parts))
    return ToolCallEnd(
        index=block.tool_index,
        id=block.tool_id,
        name=block.tool_name,
        args=args if cut_off is None else {},
        args_error=block.name_error or cut_off or error,
    )


def _block_start(state: _StreamState, index: int, content: dict[str, Any]) -> list[LlmChunk]:
    kind = str(content.get("type", ""))
    block = _Block(kind=kind)
    state.blocks[index] = block
    if kind == "text":
        text = content.get("text")
        return [TextDelta(text=text)] if isinstance(text, str) and text else []
    if kind == "thinking":
        thinking = content.get("thinking")
        signature = content.get("signature")
        if isinstance(signature, str) and signature:
            block.signature = signature
        return [ReasoningDelta(text=thinking)] if isinstance(thinking, str) and thinking else []
    if kind == "redacted_thinking":
        data = content.get("data")
        block.signature = data if isinstance(data, str) else None
        return []
    if kind == "tool_use":  # server_tool_use runs at Anthropic; we never enable it
        block.tool_index = state.tool_count
        state.tool_count += 1
        raw_id, raw_name = content.get("id"), content.get("name")
        block.tool_id = checked_tool_call_id(raw_id if isinstance(raw_id, str) else "")
        block.tool_name, block.name_error = checked_tool_name(
            raw_name if isinstance(raw_name, str) else ""
        )
        initial = content.get("input")
        if isinstance(initial, dict) and initial:
            block.json_parts.append(compact_json(initial))
        return [ToolCallStart(index=block.tool_index, id=block.tool_id, name=block.tool_name)]
    return []


def _block_delta(state: _StreamState, index: int, delta: dict[str, Any]) -> list[LlmChunk]:
    block = state.blocks.get(index)
    kind = delta.get("type")
    if kind == "text_delta":
        text = delta.get("text")
        return [TextDelta(text=text)] if isinstance(text, str) and text else []
    if kind == "thinking_delta":
        thinking = delta.get("thinking")
        return [ReasoningDelta(text=thinking)] if isinstance(thinking, str) and thinking else []
    if kind == "signature_delta" and block is not None:
        signature = delta.get("signature")
        if isinstance(signature, str):
            block.signature = (block.signature or "") + signature
        return []
    if kind == "input_json_delta" and block is not None and block.tool_index >= 0:
        partial = delta.get("partial_json")
        if isinstance(partial, str) and partial:
            block.json_parts.append(partial)
            return [ToolCallDelta(index=block.tool_index, arguments_delta=partial)]
    return []


def _block_stop(state: _StreamState, index: int, cut_off: str | None = None) -> list[LlmChunk]:
    block = state.blocks.pop(index, None)
    if block is None:
        return []
    if block.kind == "thinking" and block.signature:
        return [ReasoningDelta(text="", signature=block.signature)]
    if block.kind == "redacted_thinking" and block.signature:
        return [ReasoningDelta(text="", signature=block.signature, redacted=True)]
    if block.tool_index >= 0:
        return [_tool_end(block, cut_off)]
    return []


def _stop(state: _StreamState) -> list[LlmChunk]:
    """Close every block still open, then the stop chunk."""
    state.finished = True
    stop = _STOP_REASONS.get(state.stop_reason or "end_turn", "stop")
    # A tool block left open by a length stop was cut off mid-arguments, even if what
    # arrived happens to parse; any other open block simply lacked its stop event.
    cut_off = CUT_OFF_CALL if stop == "length" else None
    chunks: list[LlmChunk] = []
    for index in sorted(state.blocks):
        chunks.extend(_block_stop(state, index, cut_off=cut_off))
    chunks.append(StopChunk(stop_reason=stop, usage=state.usage))
    return chunks


def chunks_from_event(
    state: _StreamState, payload: dict[str, Any], *, provider_id: str, secret: str | None
) -> list[LlmChunk]:
    """Translate one parsed Messages API stream event into chunks."""
    kind = payload.get("type")
    index = _int(payload.get("index"))
    if kind == "content_block_delta":
        delta = payload.get("delta")
        return _block_delta(state, index, delta) if isinstance(delta, dict) else []
    if kind == "content_block_start":
        content = payload.get("content_block")
        return _block_start(state, index, content) if isinstance(content, dict) else []
    if kind == "content_block_stop":
        return _block_stop(state, index)
    if kind == "message_start":
        message = payload.get("message")
        usage = message.get("usage") if isinstance(message, dict) else None
        if isinstance(usage, dict):
            state.take_usage(usage)
        return []
    if kind == "message_delta":
        delta = payload.get("delta")
        if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
            state.stop_reason = delta["stop_reason"]
        usage = payload.get("usage")
        if isinstance(usage, dict):
            state.take_usage(usage)
        return []
    if kind == "message_stop":
        return _stop(state)
    if kind == "error":
        return [in_stream_error(provider_id, payload, secret, state.usage)]
    return []  # ping and event types added after this adapter was written


class MessagesDecoder(EventStreamDecoder[_StreamState]):
    """Messages API SSE events → chunks (see :class:`StreamDecoder`)."""

    def _new_state(self) -> _StreamState:
        return _StreamState()

    def finish(self) -> list[LlmChunk]:
        """End of body: without ``message_stop`` or a stop reason the answer is incomplete."""
        chunks = self._remaining()
        if self.state.ended:
            return chunks
        self.state.ended = True
        if self.state.stop_reason is not None:
            return [*chunks, *_stop(self.state)]
        error = LlmError(
            kind="transport", message="the stream ended before the response was complete"
        )
        return [*chunks, ErrorChunk(error=error, usage=self.state.usage)]

    def _events(self, events: list[EventData]) -> list[LlmChunk]:
        chunks: list[LlmChunk] = []
        loads = self._loads
        fast = self._fast
        state = self.state
        text_delta = new_text_delta
        for data in events:
            if state.ended:
                break
            text = messages_text(data) if fast and type(data) is bytes else None
            if text is not None:  # the common case, without the general dispatch
                if text:
                    chunks.append(text_delta(text))
                continue
            try:
                payload = loads(data)
            except ValueError:
                payload = None
            if type(payload) is not dict:
                state.ended = True
                chunks.append(
                    ErrorChunk(
                        error=LlmError(
                            kind="unknown", message="the provider sent a malformed stream event"
                        ),
                        usage=self.state.usage,
                    )
                )
                break
            produced = chunks_from_event(
                self.state, payload, provider_id=self._provider_id, secret=self._secret
            )
            chunks.extend(produced)
            if produced and isinstance(produced[-1], StopChunk | ErrorChunk):
                state.ended = True
        return chunks
