"""``relavium-session/1.1`` (and ``1.0``) JSONL transcript → a new session, validated first.

Every line is validated before anything is returned, and nothing is stored here: the result
is everything the file carries, ready for one store transaction. The new session gets a fresh
session id and fresh message ids; everything else is as the file says — the visible messages,
the rolled-back turns (hidden again, with how each ended), the handoffs, the checkpoints and
the progress writes (as the events that record them) — so exporting the imported session gives
the same bytes apart from the session id. Not restored: ``agent-registered`` records (the
export derives them again from the rest) and ``peer-message`` records (see
:mod:`.jsonl_records`). Two deliberate changes: the imported row starts ``idle`` with
``updatedAt`` = now, and a filesystem scope wider than ``sandboxed`` is narrowed to
``sandboxed`` (a file someone sent you must not grant an agent more of your disk than a fresh
session gets).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.content import ToolCallPart
from relavium_lsp.contracts.events import (
    EventPayload,
    SessionCheckpoint,
    StampedEvent,
    TokenUsage,
    TurnCompleted,
    TurnError,
    TurnStarted,
)
from relavium_lsp.contracts.plan import AgentPlanUpdated
from relavium_lsp.contracts.session import (
    AgentSessionRecord,
    HandoffRecord,
    RolledBackTurn,
    SessionMessage,
)
from relavium_lsp.errors import ExportError
from relavium_lsp.export.json_lines import parse_line, split_lines
from relavium_lsp.export.jsonl_records import (
    JSONL_RECORD_ADAPTER,
    AgentRegisteredRecord,
    CheckpointJsonlRecord,
    HandoffJsonlRecord,
    MessageLikeRecord,
    MessageRecord,
    PeerMessageJsonlRecord,
    ProgressWriteRecord,
    RolledBackMessage,
    RolledBackTurnRecord,
    SessionCloseRecord,
    SessionHeader,
    SessionOpenRecord,
    ToolCallRecord,
)
from relavium_lsp.store.models import utc_timestamp

# What the error of a rolled-back turn says once imported (the file keeps only its code).
IMPORTED_ERROR_MESSAGE = "The turn failed (recorded in an imported transcript)."


@dataclass(frozen=True)
class ImportedSession:
    """Everything a transcript restores, for one store transaction.

    ``events`` are numbered from 1 in time order: checkpoints, progress writes, and the start
    and end of each rolled-back turn (how it ended is read from them, as for any session).
    """

    record: AgentSessionRecord
    messages: list[SessionMessage]
    rolled_back: list[RolledBackTurn]
    handoffs: list[HandoffRecord]
    events: list[StampedEvent]


def _parse_line(number: int, line: str) -> Any:
    return parse_line(JSONL_RECORD_ADAPTER, number, line)


class _Reader:
    """Checks the order of records and rebuilds what they describe as they arrive."""

    def __init__(self, session_id: str, agent_slug: str, created_at: str) -> None:
        self.session_id = session_id
        self.agent_slug = agent_slug
        self.created_at = created_at
        self.messages: list[SessionMessage] = []
        self.rolled_back: list[RolledBackTurn] = []
        self.handoffs: list[HandoffRecord] = []
        self._events: list[tuple[str, EventPayload]] = []
        self._sequences: set[int] = set()
        self._last_visible = 0
        self._open_assistant: SessionMessage | None = None

    def _message(
        self, number: int, record: MessageLikeRecord | RolledBackMessage
    ) -> SessionMessage:
        if record.sequence_number in self._sequences:
            raise ExportError(f"sequenceNumber {record.sequence_number} is used twice", line=number)
        self._sequences.add(record.sequence_number)
        return SessionMessage(
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

    def add_message(self, number: int, record: MessageLikeRecord) -> None:
        if record.sequence_number <= self._last_visible:
            raise ExportError(
                f"sequenceNumber {record.sequence_number} does not follow {self._last_visible}",
                line=number,
            )
        self._last_visible = record.sequence_number
        message = self._message(number, record)
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

    def add_rolled_back(self, number: int, record: RolledBackTurnRecord) -> None:
        self._open_assistant = None
        messages = [self._message(number, message) for message in record.messages]
        if not messages or messages[0].sequence_number != record.user_message_sequence:
            raise ExportError(
                "a rolled-back turn starts with its user message (userMessageSequence)",
                line=number,
            )
        turn = RolledBackTurn(
            user_message_sequence=record.user_message_sequence,
            stop_reason=record.stop_reason,
            error_code=record.error_code,
            messages=messages,
        )
        self.rolled_back.append(turn)
        if record.stop_reason is None:
            return  # how it ended was not known when it was exported
        error = None
        if record.error_code is not None:
            try:
                error = TurnError.model_validate(
                    {"code": record.error_code, "message": IMPORTED_ERROR_MESSAGE}
                )
            except ValidationError:
                raise ExportError(
                    f"errorCode {record.error_code[:64]!r} is not an error code", line=number
                ) from None
        moment = messages[-1].timestamp
        self._events.append((moment, TurnStarted(user_message_sequence=turn.user_message_sequence)))
        self._events.append(
            (
                moment,
                TurnCompleted(
                    stop_reason=record.stop_reason, tokens_used=TokenUsage(), error=error
                ),
            )
        )

    def add_handoff(self, record: HandoffJsonlRecord) -> None:
        self._open_assistant = None
        self.handoffs.append(
            HandoffRecord(
                id=str(uuid.uuid4()),
                session_id=self.session_id,
                child_session_id=record.child_session_id,
                from_agent=record.from_agent,
                to_agent=record.to_agent,
                reason=record.reason,
                sequence_number=record.sequence_number,
                call_id=record.call_id,
                # 1.0 files gave no time: the handoff happened at the message that asked.
                created_at=record.timestamp or self._time_of(record.sequence_number),
                cost_cap_microcents=record.cost_cap_microcents,
                input_filter=record.input_filter,
                context_messages=record.context_messages,
            )
        )

    def add_checkpoint(self, record: CheckpointJsonlRecord) -> None:
        self._open_assistant = None
        payload = SessionCheckpoint(
            reason=record.reason,
            through_sequence=record.through_sequence,
            description=record.description,
            working_memory=record.working_memory,
        )
        self._events.append((record.timestamp or self._time_of(record.through_sequence), payload))

    def add_progress(self, record: ProgressWriteRecord) -> None:
        self._open_assistant = None
        payload = AgentPlanUpdated(entries=record.entries, explanation=record.explanation)
        self._events.append((record.timestamp, payload))

    def add_final_plan(self, close: SessionCloseRecord) -> None:
        """A ``1.0`` file kept only the final plan, in its closing record."""
        has_plan = any(isinstance(payload, AgentPlanUpdated) for _, payload in self._events)
        if close.plan and not has_plan:
            last = self.messages[-1].timestamp if self.messages else self.created_at
            self._events.append((last, AgentPlanUpdated(entries=close.plan)))

    def _time_of(self, sequence: int) -> str:
        earlier = [m.timestamp for m in self.messages if m.sequence_number <= sequence]
        return earlier[-1] if earlier else self.created_at

    def events(self) -> list[StampedEvent]:
        """The events in time order (stable: records of one moment keep the file's order)."""
        ordered = sorted(enumerate(self._events), key=lambda item: (item[1][0], item[0]))
        return [
            StampedEvent(
                session_id=self.session_id,
                sequence_number=number,
                timestamp=timestamp,
                payload=payload,
            )
            for number, (_, (timestamp, payload)) in enumerate(ordered, start=1)
        ]


def import_jsonl(text: str) -> ImportedSession:
    """Validate a whole transcript and return it as a new session (nothing is stored here)."""
    lines = split_lines(text)
    if not lines:
        raise ExportError("the file is empty", line=1)
    header = _parse_line(1, lines[0])
    if not isinstance(header, SessionOpenRecord):
        raise ExportError("the first record must be 'session-open'", line=1)
    _check_agent(header.session)
    session = header.session
    reader = _Reader(str(uuid.uuid4()), session.agent_slug, session.created_at)
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
        elif isinstance(item, RolledBackTurnRecord):
            reader.add_rolled_back(number, item)
        elif isinstance(item, HandoffJsonlRecord):
            reader.add_handoff(item)
        elif isinstance(item, CheckpointJsonlRecord):
            reader.add_checkpoint(item)
        elif isinstance(item, ProgressWriteRecord):
            reader.add_progress(item)
        elif isinstance(item, AgentRegisteredRecord | PeerMessageJsonlRecord):
            continue  # derived again on export / deliveries between live sessions
        else:
            reader.add_message(number, item)
    if close is None:
        raise ExportError(
            "the file ends without a 'session-close' record (it is truncated)",
            line=len(lines),
        )
    reader.add_final_plan(close)
    return ImportedSession(
        record=_new_record(session, reader.session_id, close),
        messages=reader.messages,
        rolled_back=reader.rolled_back,
        handoffs=reader.handoffs,
        events=reader.events(),
    )


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
        description=session.description,
        description_source=session.description_source,
        metadata=session.metadata,
    )
