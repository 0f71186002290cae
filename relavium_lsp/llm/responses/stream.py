"""Responses API stream events → seam chunks.

- ``response.output_text.delta`` → text; ``response.refusal.delta`` → text, and the answer
  completes as ``content_filter``;
- ``response.reasoning_summary_text.delta`` (and ``response.reasoning_text.delta``, the raw
  reasoning some models stream) → reasoning; a new summary part starts after a blank line;
- a ``reasoning`` item's ``response.output_item.done`` → an empty reasoning delta carrying the
  item (id, summary, encrypted content) as its signature, tagged as this format's
  (:mod:`relavium_lsp.llm.reasoning_state`), so it can be sent back;
- ``function_call`` items → tool calls, numbered 0, 1, … as they are added (several per
  response, arguments streamed in pieces by ``item_id``), ended at the item's ``done``;
- ``response.completed`` → stop (``tool_use`` when calls were made), with usage:
  ``input_tokens`` is the whole prompt, ``input_tokens_details.cached_tokens`` the cache
  reads, ``output_tokens`` includes the reasoning tokens (billed as output);
- ``response.incomplete`` → ``length`` (``max_output_tokens``) or ``content_filter``;
- ``response.failed`` and ``error`` → an error chunk of the kind the error code names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from relavium_lsp.contracts.base import compact_json
from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.http.http_call import error_type_kind, in_stream_error
from relavium_lsp.llm.http.json_events import JsonEventDecoder
from relavium_lsp.llm.http.redaction import user_safe_detail
from relavium_lsp.llm.http.sse import EventData
from relavium_lsp.llm.http.wire_common import (
    checked_tool_call_id,
    checked_tool_name,
    parse_tool_arguments,
)
from relavium_lsp.llm.reasoning_state import RESPONSES, tagged
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


class _Event(msgspec.Struct, gc=False):
    # Nearly every event is a text delta: read through this (the other keys skipped)
    # instead of a dict; any other event goes the general way.
    type: str = ""
    delta: Any = None


_decode_event = msgspec.json.Decoder(_Event).decode
_TEXT_DELTA = "response.output_text.delta"


@dataclass
class _Call:
    index: int
    id: str
    name: str
    name_error: str | None
    arguments: list[str] = field(default_factory=list)


def _count(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


def usage_from(raw: Any) -> TokenUsage:
    """A Responses ``usage`` object as seam usage (reasoning tokens are output tokens)."""
    if not isinstance(raw, dict):
        return TokenUsage()
    details = raw.get("input_tokens_details")
    details = details if isinstance(details, dict) else {}
    cache_read = _count(details.get("cached_tokens"))
    return TokenUsage(
        input_tokens=max(_count(raw.get("input_tokens")), cache_read),
        output_tokens=_count(raw.get("output_tokens")),
        cache_read_tokens=cache_read,
    )


class ResponsesDecoder(JsonEventDecoder):
    """Responses API SSE events → chunks (see the module docstring)."""

    def __init__(self, provider_id: str, secret: str | None, **options: Any) -> None:
        super().__init__(provider_id, secret, **options)
        self._usage = TokenUsage()
        self._calls: dict[str, _Call] = {}  # open calls by item id
        self._made_calls = False
        self._next_index = 0
        self._refused = False
        self._summary: tuple[str, int] | None = None  # (item id, summary index) last streamed

    @property
    def usage(self) -> TokenUsage:
        """Tokens reported so far (known at the end)."""
        return self._usage

    def _text(self, data: EventData) -> str | None:
        try:
            event = _decode_event(data)
        except ValueError:  # not a JSON object: the general path says so
            return None
        delta = event.delta
        return delta if event.type == _TEXT_DELTA and type(delta) is str else None

    def _event(self, payload: dict[str, Any]) -> list[LlmChunk]:
        kind = payload.get("type")
        if kind == "response.output_text.delta":
            delta = payload.get("delta")
            return [new_text_delta(delta)] if isinstance(delta, str) and delta else []
        if kind == "response.function_call_arguments.delta":
            return self._arguments(payload)
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return self._reasoning(payload)
        if kind == "response.output_item.added":
            item = payload.get("item")
            return self._added(item) if isinstance(item, dict) else []
        if kind == "response.output_item.done":
            item = payload.get("item")
            return self._done(item) if isinstance(item, dict) else []
        if kind == "response.refusal.delta":
            delta = payload.get("delta")
            self._refused = True
            return [new_text_delta(delta)] if isinstance(delta, str) and delta else []
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            return self._finished(kind, payload.get("response"))
        if kind == "error":
            return [in_stream_error(self._provider_id, payload, self._secret, self._usage)]
        return []  # created, in_progress, content_part.*, *.done and newer event types

    def _reasoning(self, payload: dict[str, Any]) -> list[LlmChunk]:
        delta = payload.get("delta")
        if not isinstance(delta, str) or not delta:
            return []
        where = (str(payload.get("item_id", "")), _count(payload.get("summary_index")))
        starts_part = self._summary is not None and self._summary[0] == where[0]
        separator = "\n\n" if starts_part and self._summary != where else ""
        self._summary = where
        return [ReasoningDelta(text=separator + delta)]

    def _added(self, item: dict[str, Any]) -> list[LlmChunk]:
        if item.get("type") != "function_call":
            return []
        raw_id, raw_name = item.get("call_id"), item.get("name")
        name, name_error = checked_tool_name(raw_name if isinstance(raw_name, str) else "")
        call = _Call(
            index=self._next_index,
            id=checked_tool_call_id(raw_id if isinstance(raw_id, str) else ""),
            name=name,
            name_error=name_error,
        )
        self._next_index += 1
        self._made_calls = True
        self._calls[str(item.get("id") or call.id)] = call
        chunks: list[LlmChunk] = [ToolCallStart(index=call.index, id=call.id, name=call.name)]
        arguments = item.get("arguments")
        if isinstance(arguments, str) and arguments:
            call.arguments.append(arguments)
            chunks.append(ToolCallDelta(index=call.index, arguments_delta=arguments))
        return chunks

    def _arguments(self, payload: dict[str, Any]) -> list[LlmChunk]:
        call = self._calls.get(str(payload.get("item_id")))
        delta = payload.get("delta")
        if call is None or not isinstance(delta, str) or not delta:
            return []
        call.arguments.append(delta)
        return [ToolCallDelta(index=call.index, arguments_delta=delta)]

    def _done(self, item: dict[str, Any]) -> list[LlmChunk]:
        kind = item.get("type")
        if kind == "reasoning":
            encrypted = item.get("encrypted_content")
            if not isinstance(encrypted, str) or not encrypted:
                return []  # nothing the model could be given back (stored server-side)
            kept = {
                "type": "reasoning",
                "id": item.get("id"),
                "summary": item.get("summary") or [],
                "encrypted_content": encrypted,
            }
            return [ReasoningDelta(text="", signature=tagged(RESPONSES, compact_json(kept)))]
        if kind != "function_call":
            return []
        call = self._calls.pop(str(item.get("id")), None)
        if call is None:
            call = self._calls.pop(str(item.get("call_id")), None)
        if call is None:
            return []
        final = item.get("arguments")
        text = final if isinstance(final, str) and final else "".join(call.arguments)
        args, error = parse_tool_arguments(text)
        return [
            ToolCallEnd(
                index=call.index,
                id=call.id,
                name=call.name,
                args=args,
                args_error=call.name_error or error,
            )
        ]

    def _finished(self, kind: str, response: Any) -> list[LlmChunk]:
        response = response if isinstance(response, dict) else {}
        self._usage = usage_from(response.get("usage"))
        if kind == "response.failed":
            return [self._failed(response.get("error"))]
        stop: LlmStopReason = "tool_use" if self._made_calls else "stop"
        if kind == "response.incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            stop = "content_filter" if reason == "content_filter" else "length"
        elif self._refused:
            stop = "content_filter"
        closing: list[LlmChunk] = [self._unfinished(call) for call in self._calls.values()]
        self._calls.clear()
        return [*closing, StopChunk(stop_reason=stop, usage=self._usage)]

    def _unfinished(self, call: _Call) -> ToolCallEnd:
        args, error = parse_tool_arguments("".join(call.arguments))
        return ToolCallEnd(
            index=call.index,
            id=call.id,
            name=call.name,
            args=args,
            args_error=call.name_error or error,
        )

    def _failed(self, error: Any) -> ErrorChunk:
        error = error if isinstance(error, dict) else {}
        code = str(error.get("code") or error.get("type") or "")
        message = error.get("message")
        detail = user_safe_detail(message if isinstance(message, str) else code, [self._secret])
        return ErrorChunk(
            error=LlmError(
                kind=error_type_kind(code),
                message=f"{self._provider_id}: the response failed: {detail or 'no reason given'}",
            ),
            usage=self._usage,
        )
