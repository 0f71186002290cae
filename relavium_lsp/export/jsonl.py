"""Session ⇄ ``relavium-session/1.0`` JSONL transcript (records in :mod:`.jsonl_records`).

Export writes compact JSON with sorted keys, one record per line, so the same session always
gives the same bytes. Import validates every line before anything is written and returns a
*new* session: a fresh session id, fresh message ids, everything else as the file says —
so exporting the imported session gives the same bytes apart from the session id. Two
deliberate exceptions: the imported row starts ``idle`` with ``updatedAt`` = now, and a
filesystem scope wider than ``sandboxed`` is narrowed to ``sandboxed`` (a file someone sent
you must not grant an agent more of your disk than a fresh session gets).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import ValidationError

from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.base import WireModel
from relavium_lsp.contracts.content import DurableContentPart, ToolCallPart
from relavium_lsp.contracts.events import SessionCheckpoint
from relavium_lsp.contracts.peers import PeerMessage
from relavium_lsp.contracts.plan import PlanEntry
from relavium_lsp.contracts.session import (
    AgentSessionRecord,
    HandoffRecord,
    RolledBackTurn,
    SessionMessage,
)
from relavium_lsp.errors import ExportError
from relavium_lsp.export.jsonl_records import (
    JSONL_RECORD_ADAPTER,
    CheckpointJsonlRecord,
    CompactionRecord,
    HandoffJsonlRecord,
    MessageLikeRecord,
    MessageRecord,
    PeerMessageJsonlRecord,
    RolledBackMessage,
    RolledBackTurnRecord,
    SessionCloseRecord,
    SessionHeader,
    SessionOpenRecord,
    ToolCallRecord,
    ToolResultRecord,
)
from relavium_lsp.store.models import utc_timestamp


def _line(record: WireModel) -> str:
    return json.dumps(record.to_wire(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _split_trailing_calls(
    content: Sequence[DurableContentPart],
) -> tuple[list[DurableContentPart], list[ToolCallPart]]:
    split = len(content)
    while split > 0 and isinstance(content[split - 1], ToolCallPart):
        split -= 1
    calls = [part for part in content[split:] if isinstance(part, ToolCallPart)]
    return list(content[:split]), calls


def _records(
    record: AgentSessionRecord,
    messages: Sequence[SessionMessage],
    plan: Sequence[PlanEntry] | None = None,
    rolled_back: Sequence[RolledBackTurn] = (),
    handoffs: Sequence[HandoffRecord] = (),
    checkpoints: Sequence[SessionCheckpoint] = (),
    peer_messages: Sequence[PeerMessage] = (),
) -> Iterator[WireModel]:
    yield SessionOpenRecord(
        session=SessionHeader(
            id=record.id,
            agent_slug=record.agent_slug,
            agent_snapshot=record.agent_snapshot,
            title=record.title,
            model_id=record.model_id,
            context=record.context,
            source=record.source,
            created_at=record.created_at,
        )
    )
    for message in messages:
        fields: dict[str, Any] = {
            "sequence_number": message.sequence_number,
            "role": message.role,
            "model_id": message.model_id,
            "compaction": message.compaction,
            "interruption": message.interruption,
            "timestamp": message.timestamp,
            "agent_slug": message.agent_slug,
            "token_usage": message.token_usage,
            "cost_microcents": message.cost_microcents,
        }
        if message.compaction is not None:
            yield CompactionRecord(content=message.content, **fields)
        elif message.role == "tool":
            yield ToolResultRecord(content=message.content, **fields)
        else:
            head, calls = (
                _split_trailing_calls(message.content)
                if message.role == "assistant"
                else (message.content, [])
            )
            yield MessageRecord(content=head, **fields)
            for call in calls:
                yield ToolCallRecord(
                    sequence_number=message.sequence_number,
                    call_id=call.id,
                    name=call.name,
                    args=call.args,
                )
    for handoff in handoffs:
        yield HandoffJsonlRecord(
            from_agent=handoff.from_agent,
            to_agent=handoff.to_agent,
            reason=handoff.reason,
            sequence_number=handoff.sequence_number,
            call_id=handoff.call_id,
            child_session_id=handoff.child_session_id,
        )
    for checkpoint in checkpoints:
        yield CheckpointJsonlRecord(
            reason=checkpoint.reason,
            through_sequence=checkpoint.through_sequence,
            description=checkpoint.description,
            working_memory=checkpoint.working_memory,
        )
    for peer in peer_messages:
        sent = peer.from_session_id == record.id
        yield PeerMessageJsonlRecord(direction="sent" if sent else "received", message=peer)
    for turn in rolled_back:
        yield RolledBackTurnRecord(
            user_message_sequence=turn.user_message_sequence,
            stop_reason=turn.stop_reason,
            error_code=turn.error_code,
            messages=[
                RolledBackMessage(
                    sequence_number=message.sequence_number,
                    role=message.role,
                    content=message.content,
                    model_id=message.model_id,
                    timestamp=message.timestamp,
                )
                for message in turn.messages
            ],
        )
    yield SessionCloseRecord(
        message_count=len(messages),
        turn_count=record.turn_count,
        plan=list(plan) if plan else None,
    )


def export_jsonl(
    record: AgentSessionRecord,
    messages: Sequence[SessionMessage],
    plan: Sequence[PlanEntry] | None = None,
    *,
    rolled_back: Sequence[RolledBackTurn] = (),
    handoffs: Sequence[HandoffRecord] = (),
    checkpoints: Sequence[SessionCheckpoint] = (),
    peer_messages: Sequence[PeerMessage] = (),
) -> str:
    """A session's transcript: visible messages in sequence order, then rolled-back turns.

    ``plan`` (the agent's current plan) rides in the closing record when there is one.
    """
    records = _records(record, messages, plan, rolled_back, handoffs, checkpoints, peer_messages)
    return "".join(_line(item) + "\n" for item in records)


# Records kept for the record only: the new session holds the visible history.
_NOT_IMPORTED = (
    RolledBackTurnRecord,
    HandoffJsonlRecord,
    CheckpointJsonlRecord,
    PeerMessageJsonlRecord,
)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _parse_line(number: int, line: str) -> Any:
    try:
        raw = json.loads(line, object_pairs_hook=_unique_keys, parse_constant=_reject_constant)
    except ValueError as error:  # json.JSONDecodeError is a ValueError
        reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
        raise ExportError(f"not valid JSON: {reason}", line=number) from None
    try:
        return JSONL_RECORD_ADAPTER.validate_python(raw, strict=True, by_alias=True, by_name=False)
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(step) for step in first["loc"]) or "record"
        raise ExportError(f"{where}: {first['msg']}", line=number) from None


class _Reader:
    """Checks the order of records and rebuilds messages as they arrive."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.messages: list[SessionMessage] = []
        self._last_sequence = 0
        self._open_assistant: SessionMessage | None = None

    def add_message(self, number: int, record: MessageLikeRecord) -> None:
        if record.sequence_number <= self._last_sequence:
            raise ExportError(
                f"sequenceNumber {record.sequence_number} does not follow {self._last_sequence}",
                line=number,
            )
        self._last_sequence = record.sequence_number
        message = SessionMessage(
            id=str(uuid.uuid4()),
            session_id=self.session_id,
            sequence_number=record.sequence_number,
            role=record.role,
            content=list(record.content),
            model_id=record.model_id,
            compaction=record.compaction,
            interruption=record.interruption,
            timestamp=record.timestamp,
            agent_slug=record.agent_slug,
            token_usage=record.token_usage,
            cost_microcents=record.cost_microcents,
        )
        self.messages.append(message)
        is_assistant = isinstance(record, MessageRecord) and record.role == "assistant"
        self._open_assistant = message if is_assistant else None

    def add_tool_call(self, number: int, record: ToolCallRecord) -> None:
        owner = self._open_assistant
        if owner is None or owner.sequence_number != record.sequence_number:
            raise ExportError(
                "a tool-call record must follow the assistant message with the same sequenceNumber",
                line=number,
            )
        owner.content.append(ToolCallPart(id=record.call_id, name=record.name, args=record.args))


def import_jsonl(text: str) -> tuple[AgentSessionRecord, list[SessionMessage]]:
    """Validate a whole transcript and return it as a new session (nothing is stored here)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise ExportError("the file is empty", line=1)
    header = _parse_line(1, lines[0])
    if not isinstance(header, SessionOpenRecord):
        raise ExportError("the first record must be 'session-open'", line=1)
    _check_agent(header.session)
    reader = _Reader(str(uuid.uuid4()))
    close: SessionCloseRecord | None = None
    for number, line in enumerate(lines[1:], start=2):
        if close is not None:
            raise ExportError("nothing may follow the 'session-close' record", line=number)
        item = _parse_line(number, line)
        if isinstance(item, SessionOpenRecord):
            raise ExportError("a second 'session-open' record", line=number)
        if isinstance(item, SessionCloseRecord):
            close = item
            if item.message_count != len(reader.messages):
                raise ExportError(
                    f"messageCount is {item.message_count} but the file holds "
                    f"{len(reader.messages)} message(s)",
                    line=number,
                )
        elif isinstance(item, ToolCallRecord):
            reader.add_tool_call(number, item)
        elif isinstance(item, _NOT_IMPORTED):
            continue  # kept for the record; the new session holds the visible history
        else:
            reader.add_message(number, item)
    if close is None:
        raise ExportError(
            "the file ends without a 'session-close' record (it is truncated)",
            line=len(lines),
        )
    return _new_record(header.session, reader.session_id, close), reader.messages


def _check_agent(session: SessionHeader) -> None:
    try:
        AgentDefinition.model_validate(session.agent_snapshot)
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(step) for step in first["loc"])
        raise ExportError(
            f"session.agentSnapshot is not a valid agent ({where}: {first['msg']})", line=1
        ) from None


def _new_record(
    session: SessionHeader, session_id: str, close: SessionCloseRecord
) -> AgentSessionRecord:
    context = session.context
    if context.fs_scope_tier != "sandboxed":
        context = context.model_copy(update={"fs_scope_tier": "sandboxed"})
    return AgentSessionRecord(
        id=session_id,
        agent_slug=session.agent_slug,
        agent_snapshot=session.agent_snapshot,
        title=session.title,
        model_id=session.model_id,
        context=context,
        status="idle",
        source=session.source,
        turn_count=close.turn_count,
        created_at=session.created_at,
        updated_at=utc_timestamp(),
    )
