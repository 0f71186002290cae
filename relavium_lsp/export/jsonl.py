"""Session → ``relavium-session/1.1`` JSONL transcript (records in :mod:`.jsonl_records`).

Export writes compact JSON with sorted keys, one record per line, so the same session always
gives the same bytes. The reader is :mod:`.jsonl_import`; exporting an imported session gives
the same bytes apart from the session id (and the peer messages, which an import leaves out).

**Time order.** The transcript's backbone is the session's messages in sequence order, each
``message`` line followed by its ``tool-call`` lines, with each rolled-back turn at the place
of its user message. Every other record happened at a moment: the session's own
``agent-registered`` right after ``session-open``; another agent's when it first appears
(before the message or handoff that names it); a ``handoff``, ``checkpoint``,
``progress-write`` or ``peer-message`` at its timestamp. Those are merged into the backbone by
time: a record goes before the first message that is strictly later, so one from the same
millisecond as a message follows it (a handoff follows the message that asked for it), and
records of one moment keep the order above. Timestamps are the store's sortable UTC text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from relavium_lsp.contracts.base import WireModel
from relavium_lsp.contracts.content import DurableContentPart, ToolCallPart
from relavium_lsp.contracts.events import SessionCheckpoint, StampedEvent
from relavium_lsp.contracts.peers import PeerMessage
from relavium_lsp.contracts.plan import AgentPlanUpdated, PlanEntry
from relavium_lsp.contracts.session import (
    AGENT_AUTHORED_ROLES,
    AgentSessionRecord,
    HandoffRecord,
    RolledBackTurn,
    SessionMessage,
)
from relavium_lsp.export.json_lines import dump_line
from relavium_lsp.export.jsonl_records import (
    AgentRegisteredRecord,
    CheckpointJsonlRecord,
    CompactionRecord,
    HandoffJsonlRecord,
    MessageRecord,
    PeerMessageJsonlRecord,
    ProgressWriteRecord,
    RegisteredAgent,
    RolledBackMessage,
    RolledBackTurnRecord,
    SessionCloseRecord,
    SessionHeader,
    SessionOpenRecord,
    ToolCallRecord,
    ToolResultRecord,
)

# Among records of one moment: an agent is registered before anything names it (it goes
# before a message of the same millisecond, rank 0 < the messages' 1); the rest follow.
_REGISTERED, _MESSAGES, _HAPPENED = 0, 1, 2


def _split_trailing_calls(
    content: Sequence[DurableContentPart],
) -> tuple[list[DurableContentPart], list[ToolCallPart]]:
    split = len(content)
    while split > 0 and isinstance(content[split - 1], ToolCallPart):
        split -= 1
    calls = [part for part in content[split:] if isinstance(part, ToolCallPart)]
    return list(content[:split]), calls


def _message_fields(message: SessionMessage, session_agent: str) -> dict[str, Any]:
    # An assistant row or tool result names its author; rows written before they did are
    # the session's agent's, as the store reads them since migration 15 (seed 001).
    author = message.agent_slug
    if author is None and message.role in AGENT_AUTHORED_ROLES:
        author = session_agent
    return {
        "sequence_number": message.sequence_number,
        "role": message.role,
        "model_id": message.model_id,
        "compaction": message.compaction,
        "interruption": message.interruption,
        "timestamp": message.timestamp,
        "agent_slug": author,
        "token_usage": message.token_usage,
        "cost_microcents": message.cost_microcents,
    }


def _message_lines(message: SessionMessage, session_agent: str) -> list[WireModel]:
    fields = _message_fields(message, session_agent)
    if message.compaction is not None:
        return [CompactionRecord(content=message.content, **fields)]
    if message.role == "tool":
        return [ToolResultRecord(content=message.content, **fields)]
    head, calls = (
        _split_trailing_calls(message.content)
        if message.role == "assistant"
        else (message.content, [])
    )
    return [
        MessageRecord(content=head, **fields),
        *(
            ToolCallRecord(
                sequence_number=message.sequence_number,
                call_id=call.id,
                name=call.name,
                args=call.args,
            )
            for call in calls
        ),
    ]


def _rolled_back_line(turn: RolledBackTurn, session_agent: str) -> RolledBackTurnRecord:
    return RolledBackTurnRecord(
        user_message_sequence=turn.user_message_sequence,
        stop_reason=turn.stop_reason,
        error_code=turn.error_code,
        messages=[
            RolledBackMessage(content=message.content, **_message_fields(message, session_agent))
            for message in turn.messages
        ],
    )


@dataclass(order=True)
class _Moment:
    """A record placed by time: (timestamp, rank, position) orders records of one moment."""

    timestamp: str
    rank: int
    position: int
    records: list[WireModel] = field(compare=False)


def _backbone(
    messages: Sequence[SessionMessage], rolled_back: Sequence[RolledBackTurn], session_agent: str
) -> list[_Moment]:
    units: list[tuple[int, _Moment]] = [
        (
            message.sequence_number,
            _Moment(message.timestamp, _MESSAGES, 0, _message_lines(message, session_agent)),
        )
        for message in messages
    ]
    units += [
        (
            turn.user_message_sequence,
            _Moment(
                turn.messages[0].timestamp, _MESSAGES, 0, [_rolled_back_line(turn, session_agent)]
            ),
        )
        for turn in rolled_back
        if turn.messages
    ]
    return [moment for _, moment in sorted(units, key=lambda unit: unit[0])]


def registered_agent(record: AgentSessionRecord) -> RegisteredAgent:
    """The session's own agent as the registry records it (from its frozen snapshot)."""
    snapshot = record.agent_snapshot

    def text(key: str) -> str | None:
        value = snapshot.get(key)
        return value if isinstance(value, str) and value else None

    return RegisteredAgent(
        id=record.agent_slug,
        name=text("name"),
        description=text("description"),
        model=text("model"),
        provider=text("provider"),
    )


def _other_agents(
    record: AgentSessionRecord,
    messages: Sequence[SessionMessage],
    rolled_back: Sequence[RolledBackTurn],
    handoffs: Sequence[HandoffRecord],
) -> list[_Moment]:
    """Every other agent, registered at its first appearance (a message or a handoff)."""
    seen: dict[str, str] = {}

    def saw(agent: str | None, timestamp: str) -> None:
        if agent and agent != record.agent_slug and timestamp < seen.get(agent, "\uffff"):
            seen[agent] = timestamp

    for message in [*messages, *(m for turn in rolled_back for m in turn.messages)]:
        saw(message.agent_slug, message.timestamp)
    for handoff in handoffs:
        saw(handoff.from_agent, handoff.created_at)
        saw(handoff.to_agent, handoff.created_at)
    return [
        _Moment(
            timestamp,
            _REGISTERED,
            0,
            [AgentRegisteredRecord(agent=RegisteredAgent(id=agent), timestamp=timestamp)],
        )
        for agent, timestamp in sorted(seen.items(), key=lambda item: (item[1], item[0]))
    ]


def _happenings(
    record: AgentSessionRecord,
    handoffs: Sequence[HandoffRecord],
    timeline: Sequence[StampedEvent],
    peer_messages: Sequence[PeerMessage],
) -> list[_Moment]:
    """Handoffs, checkpoints, progress writes and peer messages, each at its moment."""
    found: list[tuple[str, WireModel]] = [
        (
            handoff.created_at,
            HandoffJsonlRecord(
                from_agent=handoff.from_agent,
                to_agent=handoff.to_agent,
                reason=handoff.reason,
                sequence_number=handoff.sequence_number,
                call_id=handoff.call_id,
                child_session_id=handoff.child_session_id,
                timestamp=handoff.created_at,
                input_filter=handoff.input_filter,
                context_messages=handoff.context_messages,
                cost_cap_microcents=handoff.cost_cap_microcents,
            ),
        )
        for handoff in handoffs
    ]
    for event in timeline:
        payload = event.payload
        if isinstance(payload, SessionCheckpoint):
            found.append(
                (
                    event.timestamp,
                    CheckpointJsonlRecord(
                        reason=payload.reason,
                        through_sequence=payload.through_sequence,
                        description=payload.description,
                        working_memory=payload.working_memory,
                        timestamp=event.timestamp,
                    ),
                )
            )
        elif isinstance(payload, AgentPlanUpdated):
            found.append(
                (
                    event.timestamp,
                    ProgressWriteRecord(
                        entries=payload.entries,
                        explanation=payload.explanation,
                        timestamp=event.timestamp,
                    ),
                )
            )
    for peer in peer_messages:
        sent = peer.from_session_id == record.id
        line = PeerMessageJsonlRecord(direction="sent" if sent else "received", message=peer)
        found.append((peer.created_at, line))
    return [
        _Moment(timestamp, _HAPPENED, position, [item])
        for position, (timestamp, item) in enumerate(found)
    ]


def _records(
    record: AgentSessionRecord,
    messages: Sequence[SessionMessage],
    plan: Sequence[PlanEntry] | None,
    rolled_back: Sequence[RolledBackTurn],
    handoffs: Sequence[HandoffRecord],
    timeline: Sequence[StampedEvent],
    peer_messages: Sequence[PeerMessage],
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
            description=record.description,
            description_source=record.description_source,
            metadata=record.metadata,
        )
    )
    yield AgentRegisteredRecord(agent=registered_agent(record), timestamp=record.created_at)
    placed = sorted(
        [
            *_other_agents(record, messages, rolled_back, handoffs),
            *_happenings(record, handoffs, timeline, peer_messages),
        ]
    )
    pending = iter(placed)
    waiting = next(pending, None)
    for unit in _backbone(messages, rolled_back, record.agent_slug):
        while waiting is not None and (waiting.timestamp, waiting.rank) < (
            unit.timestamp,
            _MESSAGES,
        ):
            yield from waiting.records
            waiting = next(pending, None)
        yield from unit.records
    while waiting is not None:
        yield from waiting.records
        waiting = next(pending, None)
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
    timeline: Sequence[StampedEvent] = (),
    peer_messages: Sequence[PeerMessage] = (),
) -> str:
    """A session's transcript in time order (see the module docstring).

    ``timeline``: the session's ``session:checkpoint`` and ``agent:plan_updated`` events as
    logged; ``plan`` (the agent's current plan) rides in the closing record when there is one.
    """
    records = _records(record, messages, plan, rolled_back, handoffs, timeline, peer_messages)
    return "".join(dump_line(item) + "\n" for item in records)
