"""Seam request → Responses API JSON (``POST /responses``, streamed, stateless).

Requests are stateless: ``store: false``, the whole history as ``input`` items every call.
A reasoning model's reasoning items come back encrypted (``include:
["reasoning.encrypted_content"]``) and are sent back as they came — id, summary, encrypted
content — right before the items that followed them, within a turn and across turns
(:mod:`relavium_lsp.llm.reasoning_state`); without them the model would lose its chain of
thought at every tool round. Other formats' signatures are left out.

- the system prompt is ``instructions``;
- user text and images are ``input_text`` / ``input_image`` parts of a ``user`` message;
- assistant text is an ``assistant`` message; each tool call a ``function_call`` item
  (``call_id``, ``name``, ``arguments`` as JSON text); each result a
  ``function_call_output`` item;
- reasoning models take no ``temperature``, and ask for a reasoning summary (shown as
  reasoning); the Responses API has no stop sequences, so those are not sent.
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
    UrlSource,
)
from relavium_lsp.llm.catalog import normalize_model
from relavium_lsp.llm.reasoning_state import RESPONSES, owned_by
from relavium_lsp.llm.seam import LlmMessage, LlmRequest, ToolChoice
from relavium_lsp.llm.wire_common import unsupported_media_note

# Models that reason: they refuse ``temperature`` and can summarise their reasoning.
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5", "codex")


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` is one of OpenAI's reasoning models (by name)."""
    name = normalize_model(model)
    return name.startswith(_REASONING_PREFIXES) and not name.startswith("gpt-5-chat")


def _tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "name": choice}


def _user_part(part: TextPart | MediaPart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    source = part.source
    if part.mime_type.startswith("image/"):
        if isinstance(source, Base64Source):
            return {
                "type": "input_image",
                "image_url": f"data:{part.mime_type};base64,{source.data}",
            }
        if isinstance(source, UrlSource):
            return {"type": "input_image", "image_url": source.url}
    return {"type": "input_text", "text": unsupported_media_note(part, "images")}


def _reasoning_item(part: ReasoningPart) -> dict[str, Any] | None:
    payload = owned_by(part.signature, RESPONSES)
    if payload is None:
        return None
    try:
        item = json.loads(payload)
    except ValueError:
        return None
    return item if isinstance(item, dict) else None


def _result_output(part: ToolResultPart) -> str:
    if part.is_error and not part.result.lower().startswith("error"):
        return f"Error: {part.result}"  # no error flag on function_call_output
    return part.result


def input_items(message: LlmMessage) -> list[dict[str, Any]]:
    """One seam message as the Responses ``input`` items it becomes (possibly none)."""
    items: list[dict[str, Any]] = []
    if message.role == "assistant":
        text: list[str] = []
        for part in message.content:
            if isinstance(part, ReasoningPart):
                item = _reasoning_item(part)
                if item is not None:
                    items.append(item)
            elif isinstance(part, TextPart):
                text.append(part.text)
            elif isinstance(part, ToolCallPart):
                if text:
                    items.append({"role": "assistant", "content": "".join(text)})
                    text = []
                items.append(
                    {
                        "type": "function_call",
                        "call_id": part.id,
                        "name": part.name,
                        "arguments": compact_json(part.args),
                    }
                )
        if "".join(text):
            items.append({"role": "assistant", "content": "".join(text)})
        return items
    for part in message.content:
        if isinstance(part, ToolResultPart):
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": part.tool_call_id,
                    "output": _result_output(part) or "(no output)",
                }
            )
    parts = [_user_part(part) for part in message.content if isinstance(part, TextPart | MediaPart)]
    if parts:
        items.append({"role": "user", "content": parts})
    return items


def request_body(request: LlmRequest) -> dict[str, Any]:
    """The JSON body of a streamed ``/responses`` call."""
    items: list[dict[str, Any]] = []
    for message in request.messages:
        items.extend(input_items(message))
    body: dict[str, Any] = {"model": request.model, "input": items, "stream": True, "store": False}
    if request.system:
        body["instructions"] = request.system
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.parameters,
            }
            for spec in request.tools
        ]
        body["tool_choice"] = _tool_choice(request.tool_choice)
    if is_reasoning_model(request.model):
        body["reasoning"] = {"summary": "auto"}
        body["include"] = ["reasoning.encrypted_content"]
    elif request.temperature is not None:
        body["temperature"] = request.temperature
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    return body
