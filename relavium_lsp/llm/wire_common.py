"""Small helpers both wire mappings share."""

from __future__ import annotations

import json
import uuid
from typing import Any

from relavium_lsp.contracts.content import MediaPart


def unsupported_media_note(part: MediaPart, accepted: str) -> str:
    """Text standing in for an attachment a provider cannot take, so the model knows."""
    label = part.name or "attachment"
    return f"[{label} ({part.mime_type}) was not sent: this provider accepts {accepted} only]"


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
