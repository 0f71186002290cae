"""The OpenAI-compatible Chat Completions adapter (OpenAI, Ollama, llama.cpp, vLLM, LM Studio).

Requests are sent with ``stream: true`` and ``stream_options.include_usage`` so the last
event carries token usage. Streamed tool-call fragments are accumulated by ``index`` and
parsed once the choice finishes; arguments that are not a JSON object become
``ToolCallEnd(args_error=…)`` for the engine to hand back to the model as a tool error.
``reasoning_content`` (DeepSeek, vLLM) and ``reasoning`` (Ollama, OpenRouter) deltas become
reasoning chunks. A response finished by the content filter, or a structured ``refusal``,
completes normally with ``stop_reason="content_filter"``; a request the provider rejects
outright for policy reasons is an ``ErrorChunk`` of kind ``content_filter`` (see
:mod:`relavium_lsp.llm.http_call`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.catalog import context_window_for
from relavium_lsp.llm.http_call import CallTarget, StreamDecoder, in_stream_error, stream_call
from relavium_lsp.llm.keys import key_env_var
from relavium_lsp.llm.openai_wire import request_body
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

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"

_FINISH_REASONS: dict[str, LlmStopReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
}


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
    finish_reason: str | None = None
    refused: bool = False
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
        function = fragment.get("function")
        if not isinstance(function, dict):
            function = {}
        name = function.get("name")
        if isinstance(name, str) and name and not call.name:
            call.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            # Ollama sends already-parsed arguments.
            arguments = json.dumps(arguments)
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


def _usage_from(raw: Any) -> TokenUsage | None:
    if not isinstance(raw, dict):
        return None
    prompt = raw.get("prompt_tokens")
    completion = raw.get("completion_tokens")
    return TokenUsage(
        input_tokens=prompt if isinstance(prompt, int) else 0,
        output_tokens=completion if isinstance(completion, int) else 0,
    )


def _plain_text(payload: dict[str, Any]) -> str | None:
    """The text of a chunk that carries nothing but text (nearly all of them), else ``None``."""
    if payload.get("usage") or "error" in payload:
        return None
    choices = payload.get("choices")
    if type(choices) is not list or len(choices) != 1:
        return None
    choice = choices[0]
    if type(choice) is not dict or choice.get("finish_reason") is not None:
        return None
    delta = choice.get("delta")
    if type(delta) is not dict or len(delta) != 1:
        return None
    content = delta.get("content")
    return content if type(content) is str else None


def chunks_from_event(
    state: _StreamState, payload: dict[str, Any], *, provider_id: str, secret: str | None
) -> list[LlmChunk]:
    """Translate one parsed ``chat.completion.chunk`` (or in-stream error) into chunks."""
    text = _plain_text(payload)
    if text is not None:
        return [TextDelta(text=text)] if text else []
    if payload.get("error") is not None:
        return [in_stream_error(provider_id, payload, secret, state.usage)]
    usage = _usage_from(payload.get("usage"))
    if usage is not None:
        state.usage = usage
    chunks: list[LlmChunk] = []
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        return chunks
    choice = choices[0]
    if not isinstance(choice, dict):
        return chunks
    delta = choice.get("delta") or choice.get("message") or {}
    if isinstance(delta, dict):
        for reasoning_key in ("reasoning_content", "reasoning"):
            reasoning = delta.get(reasoning_key)
            if isinstance(reasoning, str) and reasoning:
                chunks.append(ReasoningDelta(text=reasoning))
                break
        content = delta.get("content")
        if isinstance(content, str) and content:
            chunks.append(TextDelta(text=content))
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            state.refused = True
            chunks.append(TextDelta(text=refusal))
        tool_calls = delta.get("tool_calls")
        if isinstance(tool_calls, list):
            chunks.extend(_tool_call_chunks(state, tool_calls))
    finish_reason = choice.get("finish_reason")
    if isinstance(finish_reason, str) and finish_reason:
        state.finish_reason = finish_reason
        chunks.extend(_finished_calls(state))
    return chunks


def final_chunks(state: _StreamState) -> list[LlmChunk]:
    """The closing chunks once the stream ended (``[DONE]`` or end of body)."""
    if state.finish_reason is None:
        return [
            ErrorChunk(
                error=LlmError(
                    kind="transport", message="the stream ended before the response was complete"
                ),
                usage=state.usage,
            )
        ]
    stop = _FINISH_REASONS.get(state.finish_reason, "stop")
    if state.refused and stop == "stop":
        stop = "content_filter"
    return [*_finished_calls(state), StopChunk(stop_reason=stop, usage=state.usage)]


class OpenAICompatibleProvider:
    """A Chat Completions endpoint spoken over streaming HTTP."""

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
        self._official = httpx.URL(self._base_url).host == httpx.URL(DEFAULT_OPENAI_BASE_URL).host
        self.capabilities = ProviderCapabilities(
            streaming=True,
            tools=True,
            reasoning=True,
            needs_key=self._official,
            key_env_var=key_env_var(provider_id),
        )

    def context_window(self, model: str) -> int:
        """The configured window, else the catalog's (conservative when unknown)."""
        return self._context_window or context_window_for(model)

    def _target(self) -> CallTarget:
        headers = {"accept": "text/event-stream"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        hint = f"`relavium-lsp keys set {self.provider_id}` or {self.capabilities.key_env_var}"
        return CallTarget(
            provider_id=self.provider_id,
            url=f"{self._base_url}/chat/completions",
            headers=headers,
            timeout_s=self._timeout_s,
            secret=self._api_key,
            key_hint=hint,
        )

    def _decoder(self, content_type: str) -> StreamDecoder:
        if "text/event-stream" in content_type or not content_type:
            return ChatCompletionsDecoder(self.provider_id, self._api_key)
        # A server that ignored ``stream: true`` answers with one JSON document.
        return WholeCompletionDecoder(self.provider_id, self._api_key)

    def stream(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        """Stream one completion; every failure is a final :class:`ErrorChunk`."""
        return stream_call(
            self._client,
            self._target(),
            lambda: request_body(request, official=self._official),
            self._decoder,
        )


def _malformed(state: _StreamState) -> ErrorChunk:
    return ErrorChunk(
        error=LlmError(kind="unknown", message="the provider sent a malformed stream event"),
        usage=state.usage,
    )


class ChatCompletionsDecoder:
    """``chat.completion.chunk`` SSE events → chunks (see :class:`StreamDecoder`)."""

    def __init__(self, provider_id: str, secret: str | None) -> None:
        self.state = _StreamState()
        self._sse = SseStream()
        self._provider_id = provider_id
        self._secret = secret

    @property
    def usage(self) -> TokenUsage:
        """Tokens reported so far (the usage event comes last)."""
        return self.state.usage

    def feed(self, data: bytes) -> list[LlmChunk]:
        """The chunks these bytes complete."""
        return self._events(self._sse.feed(data))

    def finish(self) -> list[LlmChunk]:
        """End of body: ``[DONE]`` is optional, a finish reason is not."""
        chunks = self._events(self._sse.finish())
        if not self.state.done:
            self.state.done = True
            chunks.extend(final_chunks(self.state))
        return chunks

    def _events(self, events: list[SseEvent]) -> list[LlmChunk]:
        state = self.state
        chunks: list[LlmChunk] = []
        for event in events:
            if state.done:
                break
            data = event.data
            if data == "[DONE]":
                state.done = True
                chunks.extend(final_chunks(state))
                break
            try:
                payload = json.loads(data)
            except ValueError:
                payload = None
            if not isinstance(payload, dict):
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
            payload = json.loads(bytes(self._body))
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            return [_malformed(state)]
        chunks = chunks_from_event(
            state, payload, provider_id=self._provider_id, secret=self._secret
        )
        if chunks and isinstance(chunks[-1], ErrorChunk):
            return chunks
        return [*chunks, *final_chunks(state)]
