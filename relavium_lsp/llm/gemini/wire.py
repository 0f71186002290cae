"""Seam request → ``generateContent`` JSON (Gemini API and Vertex AI alike).

- The history is ``contents`` of role ``user`` or ``model``, neighbours of one role merged
  (a tool round's ``functionResponse`` parts and the next user text share a ``user`` turn).
- Tool calls are ``functionCall`` parts; results are ``functionResponse`` parts naming the
  function (Gemini matches them by name and order), ``{"result": …}`` or ``{"error": …}``.
- Thought signatures go back on the part they came with, as Gemini requires (a missing one
  on a function call is a 400 on Gemini 3): each is kept as a reasoning part whose
  signature says which part it belongs to — ``call:<id>`` or ``text`` — see
  :mod:`relavium_lsp.llm.gemini.stream`. Thought text itself is not sent back.
- The system prompt is ``systemInstruction``; tools are ``functionDeclarations`` with their
  JSON Schema as ``parametersJsonSchema``; thinking models are asked to include their
  thoughts (shown as reasoning).
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
from relavium_lsp.llm.catalog import normalize_model
from relavium_lsp.llm.reasoning_state import GEMINI, owned_by
from relavium_lsp.llm.seam import LlmMessage, LlmRequest, ToolChoice
from relavium_lsp.llm.wire_common import unsupported_media_note

TEXT_ANCHOR = "text"
_THINKING_PREFIXES = ("gemini-2.5", "gemini-3")
_INLINE_TYPES = ("image/", "audio/", "video/", "application/pdf", "text/")


def signature_payload(anchor: str, signature: str) -> str:
    """What a thought signature is kept as: the part it belongs to, and the signature."""
    return compact_json({"anchor": anchor, "signature": signature})


def _signatures(message: LlmMessage) -> dict[str, str]:
    """The message's own thought signatures, by the part they belong to."""
    found: dict[str, str] = {}
    for part in message.content:
        if isinstance(part, ReasoningPart):
            payload = owned_by(part.signature, GEMINI)
            try:
                kept = json.loads(payload) if payload else None
            except ValueError:
                kept = None
            if isinstance(kept, dict) and isinstance(kept.get("signature"), str):
                found[str(kept.get("anchor"))] = kept["signature"]
    return found


def _media(part: MediaPart) -> dict[str, Any]:
    if isinstance(part.source, Base64Source) and part.mime_type.startswith(_INLINE_TYPES):
        return {"inlineData": {"mimeType": part.mime_type, "data": part.source.data}}
    return {"text": unsupported_media_note(part, "inline images, audio, video and PDF")}


def _model_parts(message: LlmMessage) -> list[dict[str, Any]]:
    signatures = _signatures(message)
    parts: list[dict[str, Any]] = []
    text = "".join(part.text for part in message.content if isinstance(part, TextPart))
    text_signature = signatures.get(TEXT_ANCHOR)
    if text or text_signature:
        part: dict[str, Any] = {"text": text}
        if text_signature:
            part["thoughtSignature"] = text_signature
        parts.append(part)
    for call in message.content:
        if isinstance(call, ToolCallPart):
            entry: dict[str, Any] = {"functionCall": {"name": call.name, "args": call.args}}
            signature = signatures.get(f"call:{call.id}")
            if signature:
                entry["thoughtSignature"] = signature
            parts.append(entry)
    return parts


def _user_parts(message: LlmMessage, names: dict[str, str]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ToolResultPart):
            key = "error" if part.is_error else "result"
            parts.append(
                {
                    "functionResponse": {
                        "name": names.get(part.tool_call_id, "unknown_function"),
                        "response": {key: part.result},
                    }
                }
            )
        elif isinstance(part, TextPart):
            if part.text:
                parts.append({"text": part.text})
        elif isinstance(part, MediaPart):
            parts.append(_media(part))
    return parts


def contents(messages: tuple[LlmMessage, ...]) -> list[dict[str, Any]]:
    """The history as ``contents``, one role per turn."""
    names: dict[str, str] = {}
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "assistant":
            names.update(
                (part.id, part.name) for part in message.content if isinstance(part, ToolCallPart)
            )
            role, parts = "model", _model_parts(message)
        else:
            role, parts = "user", _user_parts(message, names)
        if not parts:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["parts"].extend(parts)
        else:
            wire.append({"role": role, "parts": parts})
    return wire


def _tool_config(choice: ToolChoice) -> dict[str, Any]:
    if choice == "auto":
        return {"functionCallingConfig": {"mode": "AUTO"}}
    if choice == "none":
        return {"functionCallingConfig": {"mode": "NONE"}}
    if choice == "required":
        return {"functionCallingConfig": {"mode": "ANY"}}
    return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [choice]}}


def is_thinking_model(model: str) -> bool:
    """Whether ``model`` thinks (and so may be asked for its thoughts)."""
    return normalize_model(model).startswith(_THINKING_PREFIXES)


def request_body(request: LlmRequest) -> dict[str, Any]:
    """The JSON body of a ``streamGenerateContent`` call."""
    body: dict[str, Any] = {"contents": contents(request.messages)}
    if request.system:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    if request.tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    {
                        "name": spec.name,
                        "description": spec.description,
                        "parametersJsonSchema": spec.parameters,
                    }
                    for spec in request.tools
                ]
            }
        ]
        body["toolConfig"] = _tool_config(request.tool_choice)
    generation: dict[str, Any] = {}
    if request.temperature is not None:
        generation["temperature"] = request.temperature
    if request.max_tokens is not None:
        generation["maxOutputTokens"] = request.max_tokens
    if request.stop_sequences:
        generation["stopSequences"] = list(request.stop_sequences)
    if is_thinking_model(request.model):
        generation["thinkingConfig"] = {"includeThoughts": True}
    if generation:
        body["generationConfig"] = generation
    return body
