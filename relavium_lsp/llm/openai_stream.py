"""Chat Completions responses → seam chunks (streamed ``chat.completion.chunk`` or one document).

Streamed tool-call fragments are accumulated by ``index`` and parsed once the choice
finishes; arguments that are not a JSON object become ``ToolCallEnd(args_error=…)`` for the
engine to hand back to the model as a tool error. Text may come as a string or as a list of
typed parts (Mistral's reasoning models send ``[{type: "thinking", …}, {type: "text", …}]``);
``reasoning_content`` (DeepSeek, vLLM) and ``reasoning`` (Ollama, OpenRouter) deltas become
reasoning chunks. A response finished by the content filter, or a structured ``refusal``,
completes with ``stop_reason="content_filter"``.

The end of a response is the first of: a ``finish_reason``, ``data: [DONE]``, the usage
event, or the end of the body. A server that never sets ``finish_reason`` (seen through
OpenRouter) but ends cleanly still delivered a whole answer, so it completes — ``tool_use``
when it made calls. Only a body that stops short (no finish reason, no ``[DONE]``, no usage)
is an error, and :class:`~relavium_lsp.llm.stream_guard.StreamGuard` makes it non-retryable
once anything was delivered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from relavium_lsp.contracts.base import compact_json
from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.event_stream import EventStreamDecoder
from relavium_lsp.llm.fast_events import chat_text
from relavium_lsp.llm.http_call import in_stream_error
from relavium_lsp.llm.json_codec import loads
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

_FINISH_REASONS: dict[str, LlmStopReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool_use",
    "tool_use": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
}
_REASONING_PART_TYPES = frozenset({"thinking", "reasoning"})


@dataclass
class _PendingToolCall:
    index: int
    id: str
    wire_id: str
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    started: bool = False


@dataclass
class _StreamState:
    """What one response has produced so far."""

    usage: TokenUsage = field(default_factory=TokenUsage)
    usage_seen: bool = False
    finish_reason: str | None = None
    refused: bool = False
    delivered: bool = False
    made_calls: bool = False
    calls: dict[int, _PendingToolCall] = field(default_factory=dict)
    # Wire index → our index: a server that reuses an index for a new call id gets a new one.
    indices: dict[int, int] = field(default_factory=dict)
    next_index: int = 0
    done: bool = False


def _finished_calls(state: _StreamState) -> list[LlmChunk]:
    """Parse every accumulated call's arguments, in index order."""
    chunks: list[LlmChunk] = []
    for index in sorted(state.calls):
        call = state.calls[index]
        name, name_error = checked_tool_name(call.name)
        if not call.started:
            chunks.append(ToolCallStart(index=index, id=call.id, name=name))
        args, error = parse_tool_arguments("".join(call.arguments))
        chunks.append(
            ToolCallEnd(
                index=index, id=call.id, name=name, args=args, args_error=name_error or error
            )
        )
    state.calls.clear()
    state.indices.clear()
    return chunks


def _tool_call_chunks(state: _StreamState, fragments: list[Any]) -> list[LlmChunk]:
    chunks: list[LlmChunk] = []
    for position, fragment in enumerate(fragments):
        if not isinstance(fragment, dict):
            continue
        wire_index = fragment.get("index")
        if not isinstance(wire_index, int):
            # Some local servers send whole calls without an index: their order is the index.
            wire_index = position
        raw_id = fragment.get("id")
        call_id = raw_id if isinstance(raw_id, str) and raw_id else ""
        known = state.indices.get(wire_index)
        call = state.calls.get(known) if known is not None else None
        if call is None or (call_id and call_id != call.wire_id):
            call = _PendingToolCall(
                index=state.next_index, id=checked_tool_call_id(call_id), wire_id=call_id
            )
            state.indices[wire_index] = call.index
            state.calls[call.index] = call
            state.next_index += 1
            state.made_calls = True
        function = fragment.get("function")
        if not isinstance(function, dict):
            function = {}
        name = function.get("name")
        if isinstance(name, str) and name and not call.name:
            call.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            # Ollama sends already-parsed arguments.
            arguments = compact_json(arguments)
        if not call.started and call.name:
            call.started = True
            chunks.append(
                ToolCallStart(index=call.index, id=call.id, name=checked_tool_name(call.name)[0])
            )
            if call.arguments:
                pending = "".join(call.arguments)
                chunks.append(ToolCallDelta(index=call.index, arguments_delta=pending))
        if isinstance(arguments, str) and arguments:
            call.arguments.append(arguments)
            if call.started:
                chunks.append(ToolCallDelta(index=call.index, arguments_delta=arguments))
    return chunks


def _count(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


def usage_from(raw: Any) -> TokenUsage | None:
    """Chat Completions ``usage``, with the prompt-cache reads and writes it reports."""
    if not isinstance(raw, dict):
        return None
    details = raw.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    cache_read = _count(details.get("cached_tokens")) or _count(
        # DeepSeek reports hits at the top level; Moonshot sends a bare cached_tokens.
        raw.get("prompt_cache_hit_tokens") or raw.get("cached_tokens")
    )
    cache_write = _count(details.get("cache_write_tokens"))
    prompt = _count(raw.get("prompt_tokens"))
    return TokenUsage(
        input_tokens=max(prompt, cache_read + cache_write),
        output_tokens=_count(raw.get("completion_tokens")),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )


def _part_text(value: Any) -> str:
    """The text inside a part's payload: a string, a part, or a list of either."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("text", "thinking", "content", "reasoning"):
            inner = value.get(key)
            if inner is not None:
                return _part_text(inner)
        return ""
    if isinstance(value, list):
        return "".join(_part_text(item) for item in value)
    return ""


def _content_chunks(content: Any) -> list[LlmChunk]:
    """Text and reasoning from ``content``, whatever its shape (string, part, list of parts)."""
    if isinstance(content, str):
        return [TextDelta(text=content)] if content else []
    parts = content if isinstance(content, list) else [content]
    chunks: list[LlmChunk] = []
    for part in parts:
        if isinstance(part, str):
            text, reasoning = part, False
        elif isinstance(part, dict):
            reasoning = part.get("type") in _REASONING_PART_TYPES
            text = _part_text(part)
        else:
            continue
        if text:
            chunks.append(ReasoningDelta(text=text) if reasoning else TextDelta(text=text))
    return chunks


def plain_text(payload: dict[str, Any]) -> str | None:
    """The text of a chunk that carries nothing but text (nearly all of them), else ``None``.

    One choice, no finish reason, no usage or error, and a delta holding ``content`` (a
    string) and at most a ``role`` beside it. Runs once per delta, so it is kept flat.
    """
    choices = payload.get("choices")
    if type(choices) is not list or len(choices) != 1 or payload.get("usage"):
        return None
    choice = choices[0]
    if type(choice) is not dict or choice.get("finish_reason") is not None:
        return None
    delta = choice.get("delta")
    if type(delta) is not dict or not (len(delta) == 1 or (len(delta) == 2 and "role" in delta)):
        return None
    content = delta.get("content")
    if type(content) is not str or "error" in payload:
        return None
    return content


def _delta_chunks(state: _StreamState, delta: dict[str, Any]) -> list[LlmChunk]:
    chunks: list[LlmChunk] = []
    for reasoning_key in ("reasoning_content", "reasoning"):
        reasoning = delta.get(reasoning_key)
        if isinstance(reasoning, str) and reasoning:
            chunks.append(ReasoningDelta(text=reasoning))
            break
    content = delta.get("content")
    if content is not None:
        chunks.extend(_content_chunks(content))
    refusal = delta.get("refusal")
    if isinstance(refusal, str) and refusal:
        state.refused = True
        chunks.append(TextDelta(text=refusal))
    tool_calls = delta.get("tool_calls")
    if isinstance(tool_calls, list):
        chunks.extend(_tool_call_chunks(state, tool_calls))
    return chunks


def chunks_from_event(
    state: _StreamState, payload: dict[str, Any], *, provider_id: str, secret: str | None
) -> list[LlmChunk]:
    """Translate one parsed ``chat.completion.chunk`` (or in-stream error) into chunks."""
    text = plain_text(payload)
    if text is not None:
        if not text:
            return []
        state.delivered = True
        return [TextDelta(text=text)]
    if payload.get("error") is not None:
        return [in_stream_error(provider_id, payload, secret, state.usage)]
    usage = usage_from(payload.get("usage"))
    if usage is not None:
        state.usage = usage
        state.usage_seen = True
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        return []
    choice = choices[0]
    if not isinstance(choice, dict):
        return []
    delta = choice.get("delta") or choice.get("message") or {}
    chunks = _delta_chunks(state, delta) if isinstance(delta, dict) else []
    if chunks:
        state.delivered = True
    finish_reason = choice.get("finish_reason")
    if isinstance(finish_reason, str) and finish_reason:
        state.finish_reason = finish_reason
        chunks.extend(_finished_calls(state))
    return chunks


def final_chunks(state: _StreamState, *, clean_end: bool) -> list[LlmChunk]:
    """The closing chunks once the stream ended.

    ``clean_end`` is true when the server said it was done (``[DONE]``); the usage event,
    which comes last, says so too.
    """
    finish = state.finish_reason
    if finish is None:
        if not (clean_end or state.usage_seen) or not (state.delivered or state.calls):
            return [
                ErrorChunk(
                    error=LlmError(
                        kind="transport",
                        message="the stream ended before the response was complete",
                    ),
                    usage=state.usage,
                )
            ]
        finish = "tool_calls" if state.calls or state.made_calls else "stop"
    stop = _FINISH_REASONS.get(finish, "stop")
    if state.refused and stop == "stop":
        stop = "content_filter"
    if stop == "stop" and state.made_calls:
        # Some servers say "stop" after a tool call; the calls still have to run.
        stop = "tool_use"
    return [*_finished_calls(state), StopChunk(stop_reason=stop, usage=state.usage)]


def _malformed(state: _StreamState) -> ErrorChunk:
    return ErrorChunk(
        error=LlmError(kind="unknown", message="the provider sent a malformed stream event"),
        usage=state.usage,
    )


class ChatCompletionsDecoder(EventStreamDecoder[_StreamState]):
    """``chat.completion.chunk`` SSE events → chunks (see :class:`StreamDecoder`)."""

    def _new_state(self) -> _StreamState:
        return _StreamState()

    def finish(self) -> list[LlmChunk]:
        """End of body: ``[DONE]`` is optional, a finish reason nearly so."""
        chunks = self._remaining()
        if not self.state.done:
            self.state.done = True
            chunks.extend(final_chunks(self.state, clean_end=False))
        return chunks

    def _events(self, events: list[EventData]) -> list[LlmChunk]:
        state = self.state
        chunks: list[LlmChunk] = []
        loads = self._loads
        fast = self._fast
        text_delta = new_text_delta
        for data in events:
            if state.done:
                break
            text = chat_text(data) if fast and type(data) is bytes else None
            if text is not None:  # the common case, without the general dispatch
                if text:
                    state.delivered = True
                    chunks.append(text_delta(text))
                continue
            if data == b"[DONE]" or data == "[DONE]":
                state.done = True
                chunks.extend(final_chunks(state, clean_end=True))
                break
            try:
                payload = loads(data)
            except ValueError:
                payload = None
            if type(payload) is not dict:
                state.done = True
                chunks.append(_malformed(state))
                break
            produced = chunks_from_event(
                state, payload, provider_id=self._provider_id, secret=self._secret
            )
            chunks.extend(produced)
            if produced and isinstance(produced[-1], ErrorChunk):
                state.done = True
        return chunks


class WholeCompletionDecoder:
    """A non-streamed ``chat.completion`` document → the same chunks."""

    def __init__(self, provider_id: str, secret: str | None) -> None:
        self.state = _StreamState()
        self._body = bytearray()
        self._provider_id = provider_id
        self._secret = secret

    @property
    def usage(self) -> TokenUsage:
        """Tokens reported (known only at the end)."""
        return self.state.usage

    def feed(self, data: bytes) -> list[LlmChunk]:
        """Buffer: nothing can be parsed before the document is complete."""
        self._body += data
        return []

    def finish(self) -> list[LlmChunk]:
        """Parse the whole document."""
        state = self.state
        try:
            payload = loads(bytes(self._body))
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            return [_malformed(state)]
        chunks = chunks_from_event(
            state, payload, provider_id=self._provider_id, secret=self._secret
        )
        if chunks and isinstance(chunks[-1], ErrorChunk):
            return chunks
        return [*chunks, *final_chunks(state, clean_end=True)]
