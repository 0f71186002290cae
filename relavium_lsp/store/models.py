"""Small value types the repository returns, plus the encodings it shares.

Row ↔ model conversion lives here so every query module reads and writes the same columns
the same way: JSON columns hold the camelCase wire form.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import TypeAdapter, ValidationError

from relavium_lsp.contracts.base import WireModel, compact_json
from relavium_lsp.contracts.content import DurableContentPart, TextPart
from relavium_lsp.contracts.session import (
    AgentSessionRecord,
    SessionMessage,
    SessionSummary,
    SessionTotals,
)
from relavium_lsp.errors import DomainErrorCode, StoreError

CONTENT_ADAPTER: TypeAdapter[list[DurableContentPart]] = TypeAdapter(list[DurableContentPart])
PREVIEW_CHARS = 200


class InvalidCursorError(StoreError):
    """A ``list_sessions`` cursor that this store did not hand out."""

    code: DomainErrorCode = "validation"


class SessionCost(WireModel):
    """Spend of one session on one raw model string.

    ``cache_read_tokens`` / ``cache_write_tokens`` are the parts of ``input_tokens`` read
    from and written to the provider's prompt cache (priced at the cache rates).
    """

    model: str
    input_tokens: int
    output_tokens: int
    cost_microcents: int
    call_count: int
    unpriced_calls: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class SessionPage:
    """One page of ``list_sessions``: newest first; ``next_cursor`` is ``None`` on the last."""

    sessions: list[SessionSummary]
    next_cursor: str | None


def utc_timestamp(moment: datetime | None = None) -> str:
    """UTC ISO 8601 with milliseconds and ``Z`` — sortable as text, as the store sorts it."""
    value = (moment or datetime.now(UTC)).astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def durable_content(content: Sequence[DurableContentPart]) -> tuple[list[DurableContentPart], str]:
    """Re-validate parts as durable and return them with their JSON column text.

    Re-validation is deliberate: an in-flight part (a reasoning signature, inline base64
    media) handed in by mistake is rejected here instead of being persisted.
    """
    dumped = [part.model_dump(mode="json", by_alias=True) for part in content]
    parts = CONTENT_ADAPTER.validate_python(dumped)
    return parts, compact_json(dumped)


def preview_of(parts: Sequence[DurableContentPart]) -> str | None:
    """The list preview of a message: its text parts, whitespace collapsed, ~200 chars."""
    text = " ".join(part.text for part in parts if isinstance(part, TextPart))
    collapsed = re.sub(r"\s+", " ", text).strip()
    if not collapsed:
        return None
    return collapsed if len(collapsed) <= PREVIEW_CHARS else collapsed[: PREVIEW_CHARS - 1] + "…"


def encode_cursor(updated_at: str, session_id: str) -> str:
    """An opaque keyset cursor for the row after which the next page starts."""
    raw = compact_json([updated_at, session_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    """Decode :func:`encode_cursor`; anything else is an :class:`InvalidCursorError`."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (binascii.Error, ValueError, UnicodeError):
        raise InvalidCursorError("the listSessions cursor is not valid") from None
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(item, str) for item in value)
    ):
        raise InvalidCursorError("the listSessions cursor is not valid")
    return value[0], value[1]


SESSION_COLUMNS = (
    "id, agent_slug, agent_snapshot, title, model_id, context, status, source, "
    "total_input_tokens, total_output_tokens, total_cost_microcents, message_count, "
    "turn_count, last_message_preview, exported_workflow_path, created_at, updated_at, deleted_at, "
    "description, description_source, metadata, forked_from, parent_session_id"
)
# An INSERT of SESSION_COLUMNS plus working_dir (see session_to_row).
SESSION_PLACEHOLDERS = ", ".join("?" * 24)
SUMMARY_COLUMNS = (
    "id, title, agent_slug, status, updated_at, message_count, last_message_preview, working_dir, "
    "description, parent_session_id, deleted_at, turn_count"
)
MESSAGE_COLUMNS = (
    "id, session_id, sequence_number, role, content, model_id, compaction, interruption, "
    "timestamp, token_estimate, token_usage, cost_microcents, parent_message_id, agent_slug"
)


def session_from_row(row: Sequence[Any]) -> AgentSessionRecord:
    """Build a record from a row selected with :data:`SESSION_COLUMNS`."""
    return AgentSessionRecord.model_validate(
        {
            "id": row[0],
            "agentSlug": row[1],
            "agentSnapshot": json.loads(row[2]),
            "title": row[3],
            "modelId": row[4],
            "context": json.loads(row[5]),
            "status": row[6],
            "source": _source_column(row[7]),
            "totals": SessionTotals(
                input_tokens=row[8], output_tokens=row[9], cost_microcents=row[10]
            ),
            "messageCount": row[11],
            "turnCount": row[12],
            "lastMessagePreview": row[13],
            "exportedWorkflowPath": row[14],
            "createdAt": row[15],
            "updatedAt": row[16],
            "deletedAt": row[17],
            "description": row[18],
            "descriptionSource": row[19],
            "metadata": _json_or_none(row[20]),
            "forkedFrom": _json_or_none(row[21]),
            "parentSessionId": row[22],
        }
    )


def _source_column(text: str) -> Any:
    """The source object's JSON (migration 13); a plain string from an older row is its kind."""
    if text.startswith("{"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def _json_or_none(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def json_column(model: WireModel | None) -> str | None:
    """A wire model as the text of a JSON column (``None`` stays NULL)."""
    return None if model is None else compact_json(model.model_dump(mode="json", by_alias=True))


def session_to_row(record: AgentSessionRecord) -> tuple[Any, ...]:
    """The values for an INSERT in :data:`SESSION_COLUMNS` order, plus ``working_dir`` last."""
    return (
        record.id,
        record.agent_slug,
        compact_json(record.agent_snapshot),
        record.title,
        record.model_id,
        compact_json(record.context.model_dump(mode="json", by_alias=True)),
        record.status,
        compact_json(record.source.to_wire()),
        record.totals.input_tokens,
        record.totals.output_tokens,
        record.totals.cost_microcents,
        record.message_count,
        record.turn_count,
        record.last_message_preview,
        record.exported_workflow_path,
        record.created_at,
        record.updated_at,
        record.deleted_at,
        record.description,
        record.description_source,
        None if record.metadata is None else compact_json(record.metadata),
        json_column(record.forked_from),
        record.parent_session_id,
        record.context.working_dir,
    )


def summary_from_row(row: Sequence[Any]) -> SessionSummary:
    """Build a list entry from a row selected with :data:`SUMMARY_COLUMNS`."""
    return SessionSummary(
        id=row[0],
        title=row[1],
        agent_ref=row[2],
        status=row[3],
        updated_at=row[4],
        message_count=row[5],
        preview=row[6],
        working_dir=row[7],
        description=row[8],
        parent_session_id=row[9],
        deleted_at=row[10],
        turn_count=row[11],
    )


def message_from_row(row: Sequence[Any]) -> SessionMessage:
    """Build a message from a row selected with :data:`MESSAGE_COLUMNS`."""
    try:
        return SessionMessage.model_validate(
            {
                "id": row[0],
                "sessionId": row[1],
                "sequenceNumber": row[2],
                "role": row[3],
                "content": json.loads(row[4]),
                "modelId": row[5],
                "compaction": None if row[6] is None else json.loads(row[6]),
                "interruption": None if row[7] is None else json.loads(row[7]),
                "timestamp": row[8],
                "tokenUsage": _json_or_none(row[10]),
                "costMicrocents": row[11],
                "parentMessageId": row[12],
                "agentSlug": row[13],
            }
        )
    except (ValidationError, ValueError) as error:
        raise StoreError(
            f"message {row[2]} of session {row[1]} is unreadable: {type(error).__name__}"
        ) from None
