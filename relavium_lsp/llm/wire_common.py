"""Small helpers both wire mappings share."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from relavium_lsp.contracts.content import ContentPart, MediaPart
from relavium_lsp.llm.seam import LlmMessage


def unsupported_media_note(part: MediaPart, accepted: str) -> str:
    """Text standing in for an attachment a provider cannot take, so the model knows."""
    label = part.name or "attachment"
    return f"[{label} ({part.mime_type}) was not sent: this provider accepts {accepted} only]"


def alternating_turns(
    messages: Iterable[LlmMessage],
    block: Callable[[ContentPart, str], dict[str, Any] | None],
    *,
    is_result: Callable[[dict[str, Any]], bool],
    opening: dict[str, Any],
) -> list[dict[str, Any]]:
    """Seam messages as strictly alternating ``user`` / ``assistant`` turns of blocks.

    For the APIs that refuse two turns of one role in a row (Anthropic Messages, Bedrock
    Converse): ``tool`` messages are user turns, same-role neighbours are merged, tool
    results open the user turn that answers the calls (``is_result``), and a conversation
    that starts with the assistant gets the ``opening`` block as a short user turn.
    ``block`` maps one part (and its role) to a block, or ``None`` to leave it out.
    """
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = [b for b in (block(part, role) for part in message.content) if b is not None]
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    for entry in wire:
        if entry["role"] == "user":
            entry["content"].sort(key=lambda found: not is_result(found))
    if wire and wire[0]["role"] == "assistant":
        wire.insert(0, {"role": "user", "content": [opening]})
    return wire


def parse_tool_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    """Streamed tool-call arguments as an object, or ``({}, why not)`` for the model to see."""
    stripped = text.strip()
    if not stripped:
        return {}, None
    try:
        parsed = json.loads(stripped)
    except json.JSONDecodeError as exc:
        return {}, f"arguments are not valid JSON ({exc.msg} at position {exc.pos})"
    except RecursionError:
        return {}, "arguments are nested too deeply"
    if not isinstance(parsed, dict):
        return {}, "arguments must be a JSON object"
    return parsed, None


# The durable ToolCallPart allows 200 characters for an id and a name.
_MAX_IDENTIFIER = 200


def checked_tool_call_id(call_id: str) -> str:
    """The provider's call id, or a fresh one when it sent none (or an unusable one)."""
    if call_id and len(call_id) <= _MAX_IDENTIFIER:
        return call_id
    return f"call_{uuid.uuid4().hex[:24]}"


def checked_tool_name(name: str) -> tuple[str, str | None]:
    """A storable tool name, and why the call cannot run when the provider's name is unusable."""
    if not name:
        return "unnamed", "the tool call had no function name"
    if len(name) > _MAX_IDENTIFIER:
        return name[:_MAX_IDENTIFIER], "the tool name is too long"
    return name, None
