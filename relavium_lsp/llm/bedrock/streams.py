"""Bedrock's event streams → seam chunks: ConverseStream, and Claude's Messages events.

Both arrive as ``application/vnd.amazon.eventstream`` messages
(:mod:`~relavium_lsp.llm.bedrock.eventstream`). ``:message-type: exception`` (or ``error``)
messages end the answer with the error their ``:exception-type`` names
(:mod:`~relavium_lsp.llm.bedrock.errors`); corrupt framing ends it with a transport error.

**ConverseStream** events (``:event-type``): ``contentBlockStart`` opens a tool call;
``contentBlockDelta`` carries ``text``, ``toolUse.input`` pieces, or ``reasoningContent``
(``text``, then a ``signature`` or ``redactedContent`` kept, tagged as Converse's, for the
next call); ``contentBlockStop`` ends a block; ``messageStop`` gives the stop reason
(``guardrail_intervened`` and ``content_filtered`` are ``content_filter`` errors);
``metadata`` — sent after ``messageStop`` — the usage, whose ``inputTokens`` leaves out
``cacheReadInputTokens`` and ``cacheWriteInputTokens`` (added back: the seam's input is the
whole prompt). The stop chunk waits for ``metadata`` or the end of the body.

**InvokeModelWithResponseStream** (Claude through the Messages API): each ``chunk`` event's
payload is ``{"bytes": base64}`` holding one Messages stream event, handed to the Anthropic
adapter's decoder as if it had arrived over SSE.
"""

from __future__ import annotations

import binascii
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import msgspec

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.anthropic.stream import MessagesDecoder
from relavium_lsp.llm.bedrock.converse_wire import signature_payload
from relavium_lsp.llm.bedrock.errors import BedrockContext, stream_exception
from relavium_lsp.llm.bedrock.eventstream import EventMessage, EventStreamDecoder, EventStreamError
from relavium_lsp.llm.http.json_codec import loads
from relavium_lsp.llm.http.sse import EventData
from relavium_lsp.llm.http.wire_common import (
    checked_tool_call_id,
    checked_tool_name,
    parse_tool_arguments,
)
from relavium_lsp.llm.reasoning_state import CONVERSE, tagged
from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmChunk,
    LlmError,
    LlmStopReason,
    ReasoningDelta,
    StopChunk,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    new_text_delta,
)

_INCOMPLETE = "the stream ended before the response was complete"
_MALFORMED = LlmError(kind="unknown", message="the provider sent a malformed stream event")


class _Delta(msgspec.Struct, gc=False):
    text: Any = msgspec.UNSET
    toolUse: Any = msgspec.UNSET
    reasoningContent: Any = msgspec.UNSET


class _DeltaEvent(msgspec.Struct, gc=False):
    # Nearly every event is a text delta: decoded into this (unknown keys such as Bedrock's
    # padding "p" skipped) instead of a dict; anything else goes the general way.
    delta: _Delta


class _InvokeChunk(msgspec.Struct, gc=False):
    bytes: str


_decode_delta = msgspec.json.Decoder(_DeltaEvent).decode
_decode_chunk = msgspec.json.Decoder(_InvokeChunk).decode
_STOP_REASONS: dict[str, LlmStopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_use",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}
_FILTERED = frozenset({"guardrail_intervened", "content_filtered"})


class BedrockFrames(ABC):
    """Event-stream framing and exceptions; subclasses read the events."""

    def __init__(self, context: BedrockContext, secret: str | None) -> None:
        self._context = context
        self._secret = secret
        self._frames = EventStreamDecoder()
        self.ended = False

    @property
    @abstractmethod
    def usage(self) -> TokenUsage:
        """Tokens reported so far."""

    @abstractmethod
    def _event(self, kind: str, payload: bytes) -> list[LlmChunk]:
        """The chunks one event makes."""

    @abstractmethod
    def _at_end(self) -> list[LlmChunk]:
        """The closing chunks at the end of the body."""

    def _error(self, error: LlmError) -> ErrorChunk:
        self.ended = True
        return ErrorChunk(error=error, usage=self.usage)

    def feed(self, data: bytes) -> list[LlmChunk]:
        """The chunks these bytes complete."""
        if self.ended:
            return []
        messages = self._messages_in(data)
        if messages is None:
            return [self._error(self._corrupt)]
        chunks: list[LlmChunk] = []
        text_of = self._text
        for message in messages:
            if self.ended:
                break
            text = text_of(message)
            if text is not None:  # the common case, without the general dispatch
                if text:
                    chunks.append(new_text_delta(text))
            else:
                chunks.extend(self._message(message))
        return chunks

    def _text(self, message: EventMessage) -> str | None:
        """The text of an event that holds only text, else ``None`` (the general path)."""
        return None

    def _messages_in(self, data: bytes) -> list[EventMessage] | None:
        """The messages these bytes complete; ``None`` (and :attr:`_corrupt`) if corrupt."""
        try:
            return self._frames.feed(data)
        except EventStreamError as exc:
            self._corrupt = LlmError(
                kind="transport",
                message=f"{self._context.provider_id}: the event stream is corrupt ({exc})",
            )
            return None

    def _message(self, message: EventMessage) -> list[LlmChunk]:
        headers = message.headers
        kind = headers.get(":message-type", "event")
        if kind == "exception":
            name = str(headers.get(":exception-type", "exception"))
            return [
                self._error(stream_exception(self._context, name, message.payload, self._secret))
            ]
        if kind == "error":
            name = str(headers.get(":error-code", "error"))
            detail = str(headers.get(":error-message", "")).encode()
            return [self._error(stream_exception(self._context, name, detail, self._secret))]
        return self._event(str(headers.get(":event-type", "")), message.payload)

    def finish(self) -> list[LlmChunk]:
        """At end of body: the closing chunks (an error if the answer was incomplete)."""
        if self.ended:
            return []
        self.ended = True
        if self._frames.pending:
            return [
                ErrorChunk(error=LlmError(kind="transport", message=_INCOMPLETE), usage=self.usage)
            ]
        return self._at_end()


@dataclass
class _Block:
    tool_index: int = -1
    tool_id: str = ""
    tool_name: str = ""
    name_error: str | None = None
    arguments: list[str] = field(default_factory=list)
    signature: str | None = None
    redacted: str | None = None


class ConverseDecoder(BedrockFrames):
    """ConverseStream events → chunks (see the module docstring)."""

    def __init__(self, context: BedrockContext, secret: str | None) -> None:
        super().__init__(context, secret)
        self._usage = TokenUsage()
        self._blocks: dict[int, _Block] = {}
        self._next_index = 0
        self._stop: str | None = None

    @property
    def usage(self) -> TokenUsage:
        """Tokens reported so far (known with ``metadata``)."""
        return self._usage

    def _text(self, message: EventMessage) -> str | None:
        headers = message.headers
        if (
            headers.get(":event-type") != "contentBlockDelta"
            or headers.get(":message-type", "event") != "event"
        ):
            return None
        try:
            text = _decode_delta(message.payload).delta.text
        except msgspec.DecodeError:  # the general path says what is wrong
            return None
        return text if type(text) is str else None

    def _event(self, kind: str, payload: bytes) -> list[LlmChunk]:
        try:
            event = loads(payload)
        except ValueError:
            event = None
        if type(event) is not dict:
            return [
                self._error(
                    LlmError(kind="unknown", message="the provider sent a malformed stream event")
                )
            ]
        index = event.get("contentBlockIndex")
        index = index if isinstance(index, int) else 0
        if kind == "contentBlockDelta":
            delta = event.get("delta")
            return self._delta(index, delta) if isinstance(delta, dict) else []
        if kind == "contentBlockStart":
            start = event.get("start")
            tool = start.get("toolUse") if isinstance(start, dict) else None
            return self._tool_start(index, tool) if isinstance(tool, dict) else []
        if kind == "contentBlockStop":
            return self._block_stop(index)
        if kind == "messageStop":
            reason = event.get("stopReason")
            self._stop = reason if isinstance(reason, str) else "end_turn"
            if self._stop in _FILTERED:
                return [
                    self._error(
                        LlmError(
                            kind="content_filter",
                            message=(
                                f"{self._context.provider_id}: Bedrock stopped the answer "
                                f"({self._stop.replace('_', ' ')})"
                            ),
                        )
                    )
                ]
            return []
        if kind == "metadata":
            usage = event.get("usage")
            if isinstance(usage, dict):
                self._usage = _usage(usage)
            if self._stop is not None:
                return self._finished()
        return []  # messageStart and event types added later

    def _tool_start(self, index: int, tool: dict[str, Any]) -> list[LlmChunk]:
        raw_id, raw_name = tool.get("toolUseId"), tool.get("name")
        name, error = checked_tool_name(raw_name if isinstance(raw_name, str) else "")
        block = _Block(
            tool_index=self._next_index,
            tool_id=checked_tool_call_id(raw_id if isinstance(raw_id, str) else ""),
            tool_name=name,
            name_error=error,
        )
        self._next_index += 1
        self._blocks[index] = block
        return [ToolCallStart(index=block.tool_index, id=block.tool_id, name=block.tool_name)]

    def _delta(self, index: int, delta: dict[str, Any]) -> list[LlmChunk]:
        text = delta.get("text")
        if isinstance(text, str):
            return [new_text_delta(text)] if text else []
        block = self._blocks.setdefault(index, _Block())
        tool = delta.get("toolUse")
        if isinstance(tool, dict) and block.tool_index >= 0:
            piece = tool.get("input")
            if isinstance(piece, str) and piece:
                block.arguments.append(piece)
                return [ToolCallDelta(index=block.tool_index, arguments_delta=piece)]
            return []
        reasoning = delta.get("reasoningContent")
        if not isinstance(reasoning, dict):
            return []
        if isinstance(reasoning.get("signature"), str):
            block.signature = (block.signature or "") + reasoning["signature"]
        if isinstance(reasoning.get("redactedContent"), str):
            block.redacted = (block.redacted or "") + reasoning["redactedContent"]
        thought = reasoning.get("text")
        return [ReasoningDelta(text=thought)] if isinstance(thought, str) and thought else []

    def _block_stop(self, index: int, cut_off: bool = False) -> list[LlmChunk]:
        block = self._blocks.pop(index, None)
        if block is None:
            return []
        if block.tool_index >= 0:
            args, error = parse_tool_arguments("".join(block.arguments))
            if cut_off:
                args, error = {}, "the model reached its output limit before finishing this call"
            return [
                ToolCallEnd(
                    index=block.tool_index,
                    id=block.tool_id,
                    name=block.tool_name,
                    args=args,
                    args_error=block.name_error or error,
                )
            ]
        if block.redacted:
            kept = tagged(CONVERSE, signature_payload(block.redacted, redacted=True))
            return [ReasoningDelta(text="", signature=kept, redacted=True)]
        if block.signature:
            kept = tagged(CONVERSE, signature_payload(block.signature, redacted=False))
            return [ReasoningDelta(text="", signature=kept)]
        return []

    def _finished(self) -> list[LlmChunk]:
        stop = _STOP_REASONS.get(self._stop or "end_turn", "stop")
        chunks: list[LlmChunk] = []
        for index in sorted(self._blocks):
            chunks.extend(self._block_stop(index, cut_off=stop == "length"))
        self.ended = True
        return [*chunks, StopChunk(stop_reason=stop, usage=self._usage)]

    def _at_end(self) -> list[LlmChunk]:
        if self._stop is None:
            return [
                ErrorChunk(error=LlmError(kind="transport", message=_INCOMPLETE), usage=self._usage)
            ]
        return self._finished()


def _count(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


def _usage(raw: dict[str, Any]) -> TokenUsage:
    cache_read = _count(raw.get("cacheReadInputTokens"))
    cache_write = _count(raw.get("cacheWriteInputTokens"))
    return TokenUsage(
        input_tokens=_count(raw.get("inputTokens")) + cache_read + cache_write,
        output_tokens=_count(raw.get("outputTokens")),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )


class _MessagesEvents(MessagesDecoder):
    """The Messages decoder, fed one event's data at a time instead of SSE bytes."""

    def events(self, data: list[EventData]) -> list[LlmChunk]:
        """The chunks these events' data make."""
        return self._events(data)


class InvokeMessagesDecoder(BedrockFrames):
    """Claude's Messages events inside Bedrock ``chunk`` events → chunks.

    The ``chunk`` events of one read go to the Messages decoder together, in order, as the
    events of one SSE read would.
    """

    def __init__(self, context: BedrockContext, secret: str | None) -> None:
        super().__init__(context, secret)
        self._messages = _MessagesEvents(context.provider_id, secret)

    def feed(self, data: bytes) -> list[LlmChunk]:
        """The chunks these bytes complete."""
        if self.ended:
            return []
        messages = self._messages_in(data)
        if messages is None:
            return [self._error(self._corrupt)]
        chunks: list[LlmChunk] = []
        events: list[EventData] = []
        for message in messages:
            if message.headers.get(":event-type") == "chunk":
                inner = self._inner(message.payload)
                if inner is not None:
                    events.append(inner)
                    continue
                return [*chunks, *self._events(events), self._error(_MALFORMED)]
            chunks.extend(self._events(events))
            events = []
            if self.ended:
                return chunks
            chunks.extend(self._message(message))
            if self.ended:
                return chunks
        return [*chunks, *self._events(events)]

    def _inner(self, payload: bytes) -> bytes | None:
        try:
            return binascii.a2b_base64(_decode_chunk(payload).bytes, strict_mode=True)
        except (msgspec.DecodeError, ValueError, binascii.Error):
            return None

    def _events(self, events: list[EventData]) -> list[LlmChunk]:
        if not events or self.ended:
            return []
        chunks = self._messages.events(events)
        if chunks and isinstance(chunks[-1], StopChunk | ErrorChunk):
            self.ended = True
        return chunks

    @property
    def usage(self) -> TokenUsage:
        """Tokens reported so far."""
        return self._messages.usage

    def _event(self, kind: str, payload: bytes) -> list[LlmChunk]:
        return []  # ``chunk`` events are read in feed(); Bedrock sends no others

    def _at_end(self) -> list[LlmChunk]:
        return self._messages.finish()
