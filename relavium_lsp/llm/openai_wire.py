"""Seam request → Chat Completions JSON.

Tool results travel as one ``role: tool`` message each, right after the assistant message
that called them (projection already guarantees every call has a result). Reasoning parts
are not sent back: Chat Completions has no field for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from relavium_lsp.contracts.base import compact_json
from relavium_lsp.contracts.content import (
    Base64Source,
    ContentPart,
    MediaPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    UrlSource,
)
from relavium_lsp.llm.seam import LlmMessage, LlmRequest, ToolChoice, ToolSpec
from relavium_lsp.llm.wire_common import unsupported_media_note


def _tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    }


def _media(part: MediaPart) -> dict[str, Any]:
    source = part.source
    if part.mime_type.startswith("image/"):
        if isinstance(source, Base64Source):
            url = f"data:{part.mime_type};base64,{source.data}"
            return {"type": "image_url", "image_url": {"url": url}}
        if isinstance(source, UrlSource):
            return {"type": "image_url", "image_url": {"url": source.url}}
    return {"type": "text", "text": unsupported_media_note(part, "images")}


def _user_content(parts: Sequence[ContentPart]) -> str | list[dict[str, Any]] | None:
    if not parts:
        return None
    if all(isinstance(part, TextPart) for part in parts):
        return "\n\n".join(part.text for part in parts if isinstance(part, TextPart))
    content: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, MediaPart):
            content.append(_media(part))
    return content


def _tool_message(part: ToolResultPart) -> dict[str, Any]:
    result = part.result
    if part.is_error and not result.lower().startswith("error"):
        # Chat Completions has no error flag on tool results; say it in the text.
        result = f"Error: {result}"
    return {"role": "tool", "tool_call_id": part.tool_call_id, "content": result}


def wire_messages(message: LlmMessage) -> list[dict[str, Any]]:
    """One seam message as the Chat Completions messages it becomes (possibly none)."""
    results = [part for part in message.content if isinstance(part, ToolResultPart)]
    wire: list[dict[str, Any]] = [_tool_message(part) for part in results]
    if message.role == "assistant":
        text = "".join(part.text for part in message.content if isinstance(part, TextPart))
        calls = [
            {
                "id": part.id,
                "type": "function",
                "function": {"name": part.name, "arguments": compact_json(part.args)},
            }
            for part in message.content
            if isinstance(part, ToolCallPart)
        ]
        if text or calls:
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            wire.append(entry)
        return wire
    rest = [part for part in message.content if isinstance(part, TextPart | MediaPart)]
    content = _user_content(rest)
    if content:
        wire.append({"role": "user", "content": content})
    return wire


def request_body(request: LlmRequest, *, official: bool) -> dict[str, Any]:
    """The JSON body of a streaming ``/chat/completions`` call.

    ``official`` selects OpenAI's ``max_completion_tokens`` (required by its reasoning
    models); other servers still expect the older ``max_tokens``.
    """
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        messages.extend(wire_messages(message))
    return {"model": request.model, "messages": messages, **_options(request, official)}


def _options(request: LlmRequest, official: bool) -> dict[str, Any]:
    """Every field of the body after ``messages``, in the order they are sent."""
    body: dict[str, Any] = {"stream": True, "stream_options": {"include_usage": True}}
    if request.tools:
        body["tools"] = [_tool(spec) for spec in request.tools]
        body["tool_choice"] = _tool_choice(request.tool_choice)
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.max_tokens is not None:
        body["max_completion_tokens" if official else "max_tokens"] = request.max_tokens
    if request.stop_sequences:
        body["stop"] = list(request.stop_sequences)
    return body
