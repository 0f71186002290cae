"""Seam request → Anthropic Messages API JSON.

The Messages API is stricter than Chat Completions, and this module is where the rules are
kept (projection stays provider-neutral):

- Roles alternate. Consecutive messages of one role — a ``tool`` message (sent as ``user``)
  followed by the next user message, say — are **merged here**, with ``tool_result`` blocks
  first as the API requires. A conversation that starts with the assistant gets a short
  leading user message.
- The system prompt is the top-level ``system`` field, never a message.
- Thinking blocks go back only with their signature (the API rejects unsigned ones), which
  exists in flight only; a redacted block's opaque ``data`` travels in the seam's
  ``signature`` slot with ``redacted=True``. Empty text blocks are dropped (also rejected).
- ``max_tokens`` is required: the request's value, else the model's output limit.

Prompt caching: the prompt is ``tools → system → messages``, and a ``cache_control``
breakpoint caches everything before it. Up to four are placed (the API's limit): after the
last tool, after the system prompt, and on the last block of the newest and of the previous
user-side message. Each call then writes the conversation so far and the next call reads it
back, so a long session pays the cache-read rate (a tenth of input) for its history instead
of the full input rate. Prompts shorter than the model's minimum are simply not cached.
"""

from __future__ import annotations

from typing import Any

from relavium_lsp.contracts.content import (
    Base64Source,
    ContentPart,
    MediaPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    UrlSource,
)
from relavium_lsp.llm.catalog import max_output_tokens_for
from relavium_lsp.llm.reasoning_state import is_anthropic
from relavium_lsp.llm.seam import LlmMessage, LlmRequest, ToolChoice
from relavium_lsp.llm.wire_common import alternating_turns, unsupported_media_note

ANTHROPIC_VERSION = "2023-06-01"
CONTINUATION_PROMPT = "(continuing an earlier conversation)"


def _tool_choice(choice: ToolChoice) -> dict[str, Any]:
    if choice == "auto":
        return {"type": "auto"}
    if choice == "none":
        return {"type": "none"}
    if choice == "required":
        return {"type": "any"}
    return {"type": "tool", "name": choice}


def _media_block(part: MediaPart) -> dict[str, Any]:
    source = part.source
    kind = "image" if part.mime_type.startswith("image/") else None
    if part.mime_type == "application/pdf":
        kind = "document"
    if kind is not None and isinstance(source, Base64Source):
        return {
            "type": kind,
            "source": {"type": "base64", "media_type": part.mime_type, "data": source.data},
        }
    if kind is not None and isinstance(source, UrlSource):
        return {"type": kind, "source": {"type": "url", "url": source.url}}
    return {"type": "text", "text": unsupported_media_note(part, "images and PDF documents")}


def _block(part: ContentPart, role: str) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text} if part.text.strip() else None
    if isinstance(part, ReasoningPart):
        # Only Anthropic's own signatures (another format's would be refused).
        if role != "assistant" or not is_anthropic(part.signature):
            return None
        if part.redacted:
            return {"type": "redacted_thinking", "data": part.signature}
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    if isinstance(part, ToolCallPart):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": part.args}
    if isinstance(part, ToolResultPart):
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": part.tool_call_id,
            "content": part.result or "(no output)",
        }
        if part.is_error:
            block["is_error"] = True
        return block
    return _media_block(part)


def wire_messages(messages: tuple[LlmMessage, ...]) -> list[dict[str, Any]]:
    """Seam messages as alternating Messages API messages."""
    return alternating_turns(
        messages,
        _block,
        is_result=lambda block: block["type"] == "tool_result",
        opening={"type": "text", "text": CONTINUATION_PROMPT},
    )


_EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
# Breakpoints on history: the newest user-side message (written now, read by the next call)
# and the one before it (what the previous call wrote, so this call reads it).
_HISTORY_BREAKPOINTS = 2


def _mark_history(messages: list[dict[str, Any]]) -> None:
    marked = 0
    for message in reversed(messages):
        if marked == _HISTORY_BREAKPOINTS:
            return
        if message["role"] == "user" and message["content"]:
            last = message["content"][-1]
            if last.get("type") not in ("thinking", "redacted_thinking"):
                last["cache_control"] = dict(_EPHEMERAL)
                marked += 1


def request_body(request: LlmRequest, *, prompt_caching: bool = True) -> dict[str, Any]:
    """The JSON body of a streaming ``/v1/messages`` call (with cache breakpoints)."""
    messages = wire_messages(request.messages)
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens or max_output_tokens_for(request.model),
        "messages": messages,
        "stream": True,
    }
    if request.system:
        system: dict[str, Any] = {"type": "text", "text": request.system}
        if prompt_caching:
            system["cache_control"] = dict(_EPHEMERAL)
        body["system"] = [system]
    if request.tools:
        tools: list[dict[str, Any]] = [
            {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}
            for spec in request.tools
        ]
        if prompt_caching:
            tools[-1]["cache_control"] = dict(_EPHEMERAL)
        body["tools"] = tools
        body["tool_choice"] = _tool_choice(request.tool_choice)
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stop_sequences:
        body["stop_sequences"] = list(request.stop_sequences)
    if prompt_caching:
        _mark_history(messages)
    return body
