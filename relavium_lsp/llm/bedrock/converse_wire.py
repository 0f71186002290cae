"""Seam request → Bedrock Converse JSON (``POST /model/ID/converse-stream``).

Converse is as strict as the Messages API about roles: messages alternate (same-role
neighbours are merged here, ``toolResult`` blocks first), the conversation opens with a
user message, and empty text blocks are refused. Reasoning goes back as
``reasoningContent`` only with its signature (a Converse one: see
:mod:`relavium_lsp.llm.reasoning_state`). Prompt caching: ``cachePoint`` blocks after the
system prompt, after the tools and on the two newest user turns — only for model families
that cache (Claude, Nova); other models refuse the block.
"""

from __future__ import annotations

import json
from typing import Any

from relavium_lsp.contracts.base import compact_json
from relavium_lsp.contracts.content import (
    Base64Source,
    MediaPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.llm.anthropic_wire import CONTINUATION_PROMPT
from relavium_lsp.llm.reasoning_state import CONVERSE, owned_by
from relavium_lsp.llm.seam import LlmMessage, LlmRequest, ToolChoice
from relavium_lsp.llm.wire_common import alternating_turns, unsupported_media_note

_CACHE_POINT: dict[str, Any] = {"cachePoint": {"type": "default"}}
_CACHING_FAMILIES = ("anthropic.claude", "amazon.nova")
_IMAGE_FORMATS = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
}
_HISTORY_CACHE_POINTS = 2


def caches_prompts(model: str) -> bool:
    """Whether the model family takes ``cachePoint`` blocks (inference profiles included)."""
    return any(family in model.lower() for family in _CACHING_FAMILIES)


def signature_payload(signature: str | None, redacted: bool) -> str:
    """What a Converse reasoning block is kept as (its signature or redacted bytes)."""
    return compact_json({"redacted": redacted, "value": signature or ""})


def _reasoning(part: ReasoningPart) -> dict[str, Any] | None:
    payload = owned_by(part.signature, CONVERSE)
    try:
        kept = json.loads(payload) if payload else None
    except ValueError:
        kept = None
    if not isinstance(kept, dict) or not isinstance(kept.get("value"), str) or not kept["value"]:
        return None
    if kept.get("redacted"):
        return {"reasoningContent": {"redactedContent": kept["value"]}}
    return {"reasoningContent": {"reasoningText": {"text": part.text, "signature": kept["value"]}}}


def _media(part: MediaPart) -> dict[str, Any]:
    if isinstance(part.source, Base64Source):
        image = _IMAGE_FORMATS.get(part.mime_type)
        if image is not None:
            return {"image": {"format": image, "source": {"bytes": part.source.data}}}
        if part.mime_type == "application/pdf":
            name = "".join(ch for ch in (part.name or "document") if ch.isalnum() or ch in " -()[]")
            document = {"format": "pdf", "name": name or "document"}
            return {"document": {**document, "source": {"bytes": part.source.data}}}
    return {"text": unsupported_media_note(part, "PNG, JPEG, GIF and WebP images and PDF")}


def _block(part: Any, role: str) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"text": part.text} if part.text.strip() else None
    if isinstance(part, ReasoningPart):
        return _reasoning(part) if role == "assistant" else None
    if isinstance(part, ToolCallPart):
        return {"toolUse": {"toolUseId": part.id, "name": part.name, "input": part.args}}
    if isinstance(part, ToolResultPart):
        result: dict[str, Any] = {
            "toolUseId": part.tool_call_id,
            "content": [{"text": part.result or "(no output)"}],
        }
        if part.is_error:
            result["status"] = "error"
        return {"toolResult": result}
    if isinstance(part, MediaPart):
        return _media(part)
    return None


def converse_messages(messages: tuple[LlmMessage, ...]) -> list[dict[str, Any]]:
    """Seam messages as alternating Converse messages."""
    return alternating_turns(
        messages,
        _block,
        is_result=lambda block: "toolResult" in block,
        opening={"text": CONTINUATION_PROMPT},
    )


def _tool_choice(choice: ToolChoice) -> dict[str, Any]:
    if choice == "required":
        return {"any": {}}
    if choice in ("auto", "none"):  # Converse has no "none"; the tools must stay declared
        return {"auto": {}}
    return {"tool": {"name": choice}}


def _mark_history(messages: list[dict[str, Any]]) -> None:
    marked = 0
    for message in reversed(messages):
        if marked == _HISTORY_CACHE_POINTS:
            return
        if message["role"] == "user":
            message["content"].append(dict(_CACHE_POINT))
            marked += 1


def request_body(request: LlmRequest, *, prompt_caching: bool = True) -> dict[str, Any]:
    """The JSON body of a ConverseStream call."""
    caching = prompt_caching and caches_prompts(request.model)
    messages = converse_messages(request.messages)
    body: dict[str, Any] = {"messages": messages}
    if caching:
        _mark_history(messages)
    if request.system:
        body["system"] = [{"text": request.system}, *([_CACHE_POINT] if caching else [])]
    inference: dict[str, Any] = {}
    if request.max_tokens is not None:
        inference["maxTokens"] = request.max_tokens
    if request.temperature is not None:
        inference["temperature"] = request.temperature
    if request.stop_sequences:
        inference["stopSequences"] = list(request.stop_sequences)
    if inference:
        body["inferenceConfig"] = inference
    if request.tools:
        tools: list[dict[str, Any]] = [
            {
                "toolSpec": {
                    "name": spec.name,
                    "description": spec.description,
                    "inputSchema": {"json": spec.parameters},
                }
            }
            for spec in request.tools
        ]
        if caching:
            tools.append(dict(_CACHE_POINT))
        body["toolConfig"] = {"tools": tools, "toolChoice": _tool_choice(request.tool_choice)}
    return body
