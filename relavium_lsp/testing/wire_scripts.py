"""Builders for realistic provider responses, to script a :class:`LoopbackServer` with.

Each builder emits the event sequence the real API sends — OpenAI ``chat.completion.chunk``
events ending in a usage-only chunk and ``data: [DONE]``; Anthropic ``message_start``,
``content_block_*``, ``ping``, ``message_delta``, ``message_stop`` — so whatever parses them
also parses the real services. The ``*_events`` functions return the raw SSE events (to
splice, truncate or extend); the ``*_stream`` functions wrap them as a 200 response; the
``*_error`` functions build an error response with the vendor's error body.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from relavium_lsp.testing.loopback import Ending, ScriptedResponse

SSE_HEADERS = {"content-type": "text/event-stream", "cache-control": "no-cache"}


def sse(data: Any, event: str | None = None) -> bytes:
    """One SSE event; non-string data is JSON-encoded."""
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return (head + "".join(f"data: {line}\n" for line in text.split("\n")) + "\n").encode()


@dataclass(frozen=True)
class ScriptedToolCall:
    """A tool call to stream; ``arguments`` (raw text, may be invalid JSON) is split in pieces."""

    id: str
    name: str
    arguments: str
    pieces: int = 3


@dataclass(frozen=True)
class ScriptedThinking:
    """An Anthropic thinking block: streamed text pieces, then its signature."""

    pieces: Sequence[str]
    signature: str


def _split(text: str, pieces: int) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[i : i + size] for i in range(0, len(text), size)]


# -- OpenAI Chat Completions ---------------------------------------------------------------


def openai_chunk(
    delta: Mapping[str, Any] | None = None,
    *,
    finish_reason: str | None = None,
    model: str = "gpt-4o-mini",
    usage: tuple[int, int] | None = None,
    choices: bool = True,
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` object."""
    chunk: dict[str, Any] = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": (
            [{"index": 0, "delta": dict(delta or {}), "finish_reason": finish_reason}]
            if choices
            else []
        ),
    }
    if usage is not None:
        chunk["usage"] = {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        }
    return chunk


def _openai_tool_deltas(
    calls: Sequence[ScriptedToolCall], interleave: bool
) -> list[dict[str, Any]]:
    starts = [
        {"index": i, "id": c.id, "type": "function", "function": {"name": c.name, "arguments": ""}}
        for i, c in enumerate(calls)
    ]
    fragments = [
        [{"index": i, "function": {"arguments": part}} for part in _split(c.arguments, c.pieces)]
        for i, c in enumerate(calls)
    ]
    if not interleave:
        ordered: list[dict[str, Any]] = []
        for start, parts in zip(starts, fragments, strict=True):
            ordered.extend([start, *parts])
        return ordered
    ordered = list(starts)
    for round_parts in range(max((len(parts) for parts in fragments), default=0)):
        ordered.extend(parts[round_parts] for parts in fragments if round_parts < len(parts))
    return ordered


def openai_events(
    *,
    text: Sequence[str] = (),
    reasoning: Sequence[str] = (),
    reasoning_field: str = "reasoning_content",
    tool_calls: Sequence[ScriptedToolCall] = (),
    interleave_tool_calls: bool = False,
    finish_reason: str | None = None,
    usage: tuple[int, int] | None = (12, 7),
    model: str = "gpt-4o-mini",
    done: bool = True,
) -> list[bytes]:
    """The SSE events of one streamed completion."""
    events = [sse(openai_chunk({"role": "assistant", "content": ""}, model=model))]
    events += [sse(openai_chunk({reasoning_field: piece}, model=model)) for piece in reasoning]
    events += [sse(openai_chunk({"content": piece}, model=model)) for piece in text]
    for fragment in _openai_tool_deltas(tool_calls, interleave_tool_calls):
        events.append(sse(openai_chunk({"tool_calls": [fragment]}, model=model)))
    reason = finish_reason or ("tool_calls" if tool_calls else "stop")
    events.append(sse(openai_chunk({}, finish_reason=reason, model=model)))
    if usage is not None:
        events.append(sse(openai_chunk(model=model, usage=usage, choices=False)))
    if done:
        events.append(sse("[DONE]"))
    return events


def openai_stream(*, ending: Ending = "complete", **options: Any) -> ScriptedResponse:
    """A 200 streaming completion (options as for :func:`openai_events`)."""
    return ScriptedResponse(headers=SSE_HEADERS, body=openai_events(**options), ending=ending)


def openai_error(
    status: int,
    message: str,
    *,
    error_type: str = "invalid_request_error",
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> ScriptedResponse:
    """An OpenAI-style error response."""
    body = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
    return ScriptedResponse(
        status=status,
        headers={"content-type": "application/json", **(headers or {})},
        body=json.dumps(body).encode(),
    )


# -- Anthropic Messages --------------------------------------------------------------------


def anthropic_event(event_type: str, **fields: Any) -> bytes:
    """One Messages API stream event (the SSE event name equals its ``type``)."""
    return sse({"type": event_type, **fields}, event=event_type)


def anthropic_error_event(error_type: str, message: str) -> bytes:
    """An in-stream ``error`` event."""
    return anthropic_event("error", error={"type": error_type, "message": message})


def anthropic_events(
    *,
    thinking: Sequence[ScriptedThinking] = (),
    redacted_thinking: Sequence[str] = (),
    text: Sequence[str] = (),
    tool_calls: Sequence[ScriptedToolCall] = (),
    stop_reason: str | None = None,
    usage: tuple[int, int] = (12, 7),
    model: str = "claude-sonnet-4-5",
    pings: bool = True,
    stop: bool = True,
    cache: tuple[int, int] = (0, 0),
) -> list[bytes]:
    """The SSE events of one streamed message: thinking, redacted thinking, text, tool uses.

    ``usage`` is (uncached input, output) tokens; ``cache`` is (cache reads, cache writes).
    """
    start: dict[str, Any]
    delta: dict[str, Any]
    message: dict[str, Any] = {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage[0],
            "cache_read_input_tokens": cache[0],
            "cache_creation_input_tokens": cache[1],
            "output_tokens": 1,
        },
    }
    events = [anthropic_event("message_start", message=message)]
    if pings:
        events.append(anthropic_event("ping"))
    index = 0
    for block in thinking:
        start = {"type": "thinking", "thinking": "", "signature": ""}
        events.append(anthropic_event("content_block_start", index=index, content_block=start))
        for piece in block.pieces:
            delta = {"type": "thinking_delta", "thinking": piece}
            events.append(anthropic_event("content_block_delta", index=index, delta=delta))
        delta = {"type": "signature_delta", "signature": block.signature}
        events.append(anthropic_event("content_block_delta", index=index, delta=delta))
        events.append(anthropic_event("content_block_stop", index=index))
        index += 1
    for data in redacted_thinking:
        start = {"type": "redacted_thinking", "data": data}
        events.append(anthropic_event("content_block_start", index=index, content_block=start))
        events.append(anthropic_event("content_block_stop", index=index))
        index += 1
    if text:
        start = {"type": "text", "text": ""}
        events.append(anthropic_event("content_block_start", index=index, content_block=start))
        for piece in text:
            delta = {"type": "text_delta", "text": piece}
            events.append(anthropic_event("content_block_delta", index=index, delta=delta))
        events.append(anthropic_event("content_block_stop", index=index))
        index += 1
    for call in tool_calls:
        start = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        events.append(anthropic_event("content_block_start", index=index, content_block=start))
        for part in _split(call.arguments, call.pieces):
            delta = {"type": "input_json_delta", "partial_json": part}
            events.append(anthropic_event("content_block_delta", index=index, delta=delta))
        events.append(anthropic_event("content_block_stop", index=index))
        index += 1
    reason = stop_reason or ("tool_use" if tool_calls else "end_turn")
    events.append(
        anthropic_event(
            "message_delta",
            delta={"stop_reason": reason, "stop_sequence": None},
            usage={"output_tokens": usage[1]},
        )
    )
    if stop:
        events.append(anthropic_event("message_stop"))
    return events


def anthropic_stream(*, ending: Ending = "complete", **options: Any) -> ScriptedResponse:
    """A 200 streaming message (options as for :func:`anthropic_events`)."""
    return ScriptedResponse(headers=SSE_HEADERS, body=anthropic_events(**options), ending=ending)


def anthropic_error(
    status: int, error_type: str, message: str, *, headers: Mapping[str, str] | None = None
) -> ScriptedResponse:
    """An Anthropic-style error response."""
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    return ScriptedResponse(
        status=status,
        headers={"content-type": "application/json", **(headers or {})},
        body=json.dumps(body).encode(),
    )
