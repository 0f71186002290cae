"""The Anthropic Messages API adapter (streaming, tool use, thinking blocks).

Stream events map to seam chunks as follows:

- ``message_start`` → input usage (cache creation and cache reads count as input);
- ``content_block_start``/``_delta``/``_stop`` → text, reasoning and tool-call chunks. A
  thinking block's ``signature_delta`` is held until the block stops and then sent on one
  final empty :class:`ReasoningDelta`; a ``redacted_thinking`` block becomes one
  ``ReasoningDelta(text="", signature=<data>, redacted=True)``. Tool calls are numbered
  0, 1, … in the order they start, like Chat Completions indices.
- ``message_delta`` → stop reason and cumulative output usage; ``message_stop`` → the
  :class:`StopChunk`; ``ping`` is ignored; ``error`` → an :class:`ErrorChunk` by error type.

``stop_reason: refusal`` completes with ``stop_reason="content_filter"``; a request the API
rejects for policy reasons is an ``ErrorChunk`` of kind ``content_filter``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.anthropic_wire import ANTHROPIC_VERSION, request_body
from relavium_lsp.llm.catalog import context_window_for
from relavium_lsp.llm.http_call import CallTarget, StreamDecoder, in_stream_error, stream_call
from relavium_lsp.llm.keys import key_env_var
from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmChunk,
    LlmError,
    LlmRequest,
    LlmStopReason,
    ProviderCapabilities,
    ReasoningDelta,
    StopChunk,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from relavium_lsp.llm.sse import SseEvent, SseStream
from relavium_lsp.llm.wire_common import (
    checked_tool_call_id,
    checked_tool_name,
    parse_tool_arguments,
)

DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com"

_STOP_REASONS: dict[str, LlmStopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_use",
    "refusal": "content_filter",
}


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
    input_tokens: int = 0
    output_tokens: int = 0
    stop_reason: str | None = None
    blocks: dict[int, _Block] = field(default_factory=dict)
    tool_count: int = 0
    finished: bool = False

    @property
    def usage(self) -> TokenUsage:
        return TokenUsage(input_tokens=self.input_tokens, output_tokens=self.output_tokens)


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _tool_end(block: _Block) -> ToolCallEnd:
    args, error = parse_tool_arguments("".join(block.json_parts))
    return ToolCallEnd(
        index=block.tool_index,
        id=block.tool_id,
        name=block.tool_name,
        args=args,
        args_error=block.name_error or error,
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
            block.json_parts.append(json.dumps(initial))
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


def _block_stop(state: _StreamState, index: int) -> list[LlmChunk]:
    block = state.blocks.pop(index, None)
    if block is None:
        return []
    if block.kind == "thinking" and block.signature:
        return [ReasoningDelta(text="", signature=block.signature)]
    if block.kind == "redacted_thinking" and block.signature:
        return [ReasoningDelta(text="", signature=block.signature, redacted=True)]
    if block.tool_index >= 0:
        return [_tool_end(block)]
    return []


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
            state.input_tokens = (
                _int(usage.get("input_tokens"))
                + _int(usage.get("cache_creation_input_tokens"))
                + _int(usage.get("cache_read_input_tokens"))
            )
            state.output_tokens = _int(usage.get("output_tokens"))
        return []
    if kind == "message_delta":
        delta = payload.get("delta")
        if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
            state.stop_reason = delta["stop_reason"]
        usage = payload.get("usage")
        if isinstance(usage, dict):
            if isinstance(usage.get("output_tokens"), int):
                state.output_tokens = usage["output_tokens"]
            if isinstance(usage.get("input_tokens"), int):
                state.input_tokens = (
                    usage["input_tokens"]
                    + _int(usage.get("cache_creation_input_tokens"))
                    + _int(usage.get("cache_read_input_tokens"))
                )
        return []
    if kind == "message_stop":
        state.finished = True
        stop = _STOP_REASONS.get(state.stop_reason or "end_turn", "stop")
        return [StopChunk(stop_reason=stop, usage=state.usage)]
    if kind == "error":
        return [in_stream_error(provider_id, payload, secret, state.usage)]
    return []  # ping and event types added after this adapter was written


class AnthropicProvider:
    """Claude models through the Messages API."""

    def __init__(
        self,
        provider_id: str,
        *,
        base_url: str,
        api_key: str | None,
        client: httpx.AsyncClient,
        timeout_s: float,
        context_window: int | None = None,
    ) -> None:
        self.provider_id = provider_id
        self._base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._client = client
        self._timeout_s = timeout_s
        self._context_window = context_window
        self.capabilities = ProviderCapabilities(
            streaming=True,
            tools=True,
            reasoning=True,
            needs_key=True,
            key_env_var=key_env_var(provider_id),
        )

    def context_window(self, model: str) -> int:
        """The configured window, else the catalog's (conservative when unknown)."""
        return self._context_window or context_window_for(model)

    def _target(self) -> CallTarget:
        headers = {"accept": "text/event-stream", "anthropic-version": ANTHROPIC_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        base = self._base_url
        url = f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"
        hint = f"`relavium-lsp keys set {self.provider_id}` or {self.capabilities.key_env_var}"
        return CallTarget(
            provider_id=self.provider_id,
            url=url,
            headers=headers,
            timeout_s=self._timeout_s,
            secret=self._api_key,
            key_hint=hint,
        )

    def _decoder(self, content_type: str) -> StreamDecoder:
        return MessagesDecoder(self.provider_id, self._api_key)

    def stream(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        """Stream one message; every failure is a final :class:`ErrorChunk`."""
        return stream_call(
            self._client, self._target(), lambda: request_body(request), self._decoder
        )


class MessagesDecoder:
    """Messages API SSE events → chunks (see :class:`StreamDecoder`)."""

    def __init__(self, provider_id: str, secret: str | None) -> None:
        self.state = _StreamState()
        self._sse = SseStream()
        self._provider_id = provider_id
        self._secret = secret
        self._ended = False

    @property
    def usage(self) -> TokenUsage:
        """Input tokens from ``message_start``, output tokens as of the last delta."""
        return self.state.usage

    def feed(self, data: bytes) -> list[LlmChunk]:
        """The chunks these bytes complete."""
        return self._events(self._sse.feed(data))

    def finish(self) -> list[LlmChunk]:
        """End of body: without ``message_stop`` the answer is incomplete."""
        chunks = self._events(self._sse.finish())
        if not self._ended:
            self._ended = True
            chunks.append(
                ErrorChunk(
                    error=LlmError(
                        kind="transport",
                        message="the stream ended before the response was complete",
                    ),
                    usage=self.state.usage,
                )
            )
        return chunks

    def _events(self, events: list[SseEvent]) -> list[LlmChunk]:
        chunks: list[LlmChunk] = []
        for event in events:
            if self._ended:
                break
            try:
                payload = json.loads(event.data)
            except ValueError:
                payload = None
            if not isinstance(payload, dict):
                self._ended = True
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
                self._ended = True
        return chunks
