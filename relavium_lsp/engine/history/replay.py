"""Replay: re-run a session's turns in a new session against its own recordings (§9, seed 004).

A replay creates an ordinary session of this engine, marked as a replay (its source's kind is
``replay``, ``triggerId`` the replayed session), with the original agent snapshot and context.
Its model is a cassette of the original's assistant messages; its tools answer from the tool
cassette — the one an export stored (:mod:`relavium_lsp.export.tool_cassette`), else one built
from the transcript and the event log's timings — or run live where the tool replay mode
allows it for the tool's side-effect class (:mod:`relavium_lsp.contracts.replay`). It sends
each completed turn's user message again, so its events stream exactly as a live turn's do,
to every editor following the history. When it has sent them all (or one ended with an
error or an abort) it compares the transcripts, completes the replay's audit row (one per
replay, written when it starts), audits the handoffs involved, emits
``session:replay_completed`` on the replay session, and stops serving the session with its
recordings: the next use loads it like any other session.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.events import SessionReplayCompleted
from relavium_lsp.contracts.replay import (
    CassetteSource,
    ReplayAuditRecord,
    ReplayReport,
    ToolReplayMode,
)
from relavium_lsp.contracts.session import AgentSessionRecord, SessionMessage, SessionSource
from relavium_lsp.engine.collab.delegation import audit_replay
from relavium_lsp.engine.history.exports import full_transcript
from relavium_lsp.engine.scope import EngineServices
from relavium_lsp.engine.sessions.live import LiveSessions
from relavium_lsp.engine.sessions.session import AgentSession
from relavium_lsp.errors import ExportError, InvalidInput, RelaviumError
from relavium_lsp.export.replay import (
    TranscriptEntry,
    compare,
    replay_config,
    replayable,
    user_input,
)
from relavium_lsp.export.replay_cassettes import ReplayToolDispatcher, provider_cassette
from relavium_lsp.export.tool_cassette import (
    ToolCassette,
    parse_tool_cassette,
    record_tool_cassette,
)
from relavium_lsp.export.turns import LogicalTurn, group_turns
from relavium_lsp.llm.cassette import CassetteProvider
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.store.models import utc_timestamp
from relavium_lsp.store.rows import replays
from relavium_lsp.tools.registry import ToolRegistry, default_registry

_log = logging.getLogger(__name__)
REPLAY_PROVIDER_ID = "replay"
# Large enough that nothing the original compacted is compacted again (§9).
REPLAY_CONTEXT_WINDOW = 1_000_000
REPLAY_SOURCE_KIND = "replay"


@dataclass(frozen=True)
class ReplayStarted:
    """A replay under way: its session, how many turns it sends, and the task that runs it."""

    replay_session_id: str
    turns_to_replay: int
    task: asyncio.Task[ReplayReport]


@dataclass(frozen=True)
class _Plan:
    """What one replay sends and against what."""

    source: AgentSessionRecord
    chosen: list[LogicalTurn]
    skipped: list[LogicalTurn]
    system_messages: int
    mode: ToolReplayMode
    cassette: CassetteSource
    audit_id: str


class Replays:
    """The replays this engine runs; each is a task the engine owns until it ends."""

    def __init__(self, services: EngineServices, live: LiveSessions) -> None:
        self._services = services
        self._live = live
        self._tasks: set[asyncio.Task[ReplayReport]] = set()

    async def start(
        self,
        session_id: str,
        *,
        mode: ToolReplayMode = "auto",
        live_tools: Sequence[str] = (),
    ) -> ReplayStarted:
        """Create the replay session and start sending its turns (the source is untouched)."""
        registry = self._registry()
        chosen_tools = frozenset(live_tools)
        _refuse_side_effecting(registry, chosen_tools)
        record, messages = await full_transcript(self._services, session_id)
        try:
            agent = AgentDefinition.model_validate(record.agent_snapshot)
        except ValueError:
            raise ExportError("the session's agent snapshot is not a valid agent") from None
        turns = group_turns(messages)
        chosen = [turn for turn in turns if replayable(turn)]
        cassette, source = await self._recorded_calls(session_id, messages)
        provider = CassetteProvider(
            REPLAY_PROVIDER_ID,
            provider_cassette(chosen),
            match="sequence",
            context_window=REPLAY_CONTEXT_WINDOW,
        )
        title = record.title or f"Session {record.id[:8]}"
        session = await self._live.create(
            context=record.context,
            agent_ref=agent.id,
            title=f"{title} (replay)",
            source=SessionSource(kind=REPLAY_SOURCE_KIND, interactive=False, trigger_id=record.id),
            config=replay_config(agent, await self._policy(record), chosen),
            chain=[ChainEntry(provider, record.model_id or REPLAY_PROVIDER_ID)],
        )
        session.scope.tools = ReplayToolDispatcher(
            registry, cassette, mode=mode, live_tools=chosen_tools
        )
        session.turn_watch = None  # no automatic introspection: its model is a recording
        plan = _Plan(
            source=record,
            chosen=chosen,
            skipped=[turn for turn in turns if not replayable(turn)],
            system_messages=sum(1 for message in messages if message.role == "system"),
            mode=mode,
            cassette=source,
            audit_id=str(uuid.uuid4()),
        )
        await self._services.store.run(
            lambda s: replays.insert_replay(
                s.connection,
                ReplayAuditRecord(
                    id=plan.audit_id,
                    session_id=record.id,
                    replay_session_id=session.id,
                    mode=mode,
                    status="running",
                    turns_replayed=0,
                    differences=0,
                    live_tool_calls=0,
                    recorded_tool_calls=0,
                    cassette=source,
                    created_at=utc_timestamp(),
                ),
            )
        )
        task = asyncio.create_task(self._run(session, plan))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_log_failure)
        return ReplayStarted(session.id, len(chosen), task)

    async def close(self) -> None:
        """Stop every replay still running (engine shutdown)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _registry(self) -> ToolRegistry:
        tools = self._services.tools
        return tools if isinstance(tools, ToolRegistry) else default_registry()

    async def _policy(self, record: AgentSessionRecord) -> EffectiveChatPolicy:
        try:
            return (await self._live.workspace_config(record.context.working_dir)).policy
        except (RelaviumError, OSError):
            # The workspace may be gone or its config broken: the replay still runs on defaults.
            return EffectiveChatPolicy()

    async def _recorded_calls(
        self, session_id: str, messages: Sequence[SessionMessage]
    ) -> tuple[ToolCassette, CassetteSource]:
        """The stored tool cassette over the one the transcript gives (stored calls win)."""
        stored_text, durations = await self._services.store.run(
            lambda s: (
                replays.load_tool_cassette(s.connection, session_id),
                replays.tool_durations(s.connection, session_id),
            )
        )
        derived = record_tool_cassette(session_id, messages, durations)
        if stored_text is None:
            return derived, "transcript"
        try:
            stored = parse_tool_cassette(stored_text)
        except ExportError as error:
            _log.warning("the stored tool cassette of %s does not read: %s", session_id, error)
            return derived, "transcript"
        return ToolCassette(session_id, {**derived.calls, **stored.calls}), "stored"

    async def _run(self, session: AgentSession, plan: _Plan) -> ReplayReport:
        stopped = True
        try:
            stopped = await _send_turns(session, plan.chosen)
        finally:
            report = await self._finish(session, plan, stopped)
        return report

    async def _finish(self, session: AgentSession, plan: _Plan, stopped: bool) -> ReplayReport:
        store = self._services.store
        await self._services.bus.drain(session.id)
        replayed_messages = await store.run(lambda s: list(s.iter_messages(session.id)))
        original = [
            TranscriptEntry.of(message)
            for turn in plan.chosen
            for message in (*turn.user_messages, *turn.answers)
        ]
        replayed = [TranscriptEntry.of(message) for message in replayed_messages]
        differences = compare(original, replayed)
        tools = session.scope.tools
        counters = tools.counters if isinstance(tools, ReplayToolDispatcher) else None
        report = ReplayReport(
            session_id=plan.source.id,
            replay_session_id=session.id,
            mode=plan.mode,
            cassette=plan.cassette,
            turns_replayed=sum(1 for message in replayed_messages if message.role == "user"),
            skipped_turn_sequences=[
                (turn.user_messages or turn.answers)[0].sequence_number for turn in plan.skipped
            ],
            skipped_system_messages=plan.system_messages,
            live_tool_calls=counters.live if counters else 0,
            recorded_tool_calls=counters.recorded if counters else 0,
            missing_recordings=counters.missing if counters else 0,
            differences=differences,
            matches=not differences,
            stopped=stopped,
        )
        status: Literal["matched", "differed", "stopped"] = (
            "stopped" if stopped else "matched" if report.matches else "differed"
        )
        detail = (
            f"replayed {report.turns_replayed} turns into {session.id}, "
            f"{len(differences)} differences"
        )
        await store.run(
            lambda s: replays.finish_replay(
                s.connection,
                plan.audit_id,
                status=status,
                turns_replayed=report.turns_replayed,
                differences=len(differences),
                live_tool_calls=report.live_tool_calls,
                recorded_tool_calls=report.recorded_tool_calls,
                detail=detail,
                finished_at=utc_timestamp(),
            )
        )
        await audit_replay(store, plan.source.id, detail)
        # After the audit row: a client that opens the replay session late and finds the row
        # still ``running`` is sure to receive this event.
        session.scope.emit(SessionReplayCompleted(report=report))
        await session.scope.flush_events()
        if not session.busy:
            self._live.forget(session.id)  # loaded afresh next time: its own model and tools
        return report


async def _send_turns(session: AgentSession, turns: Sequence[LogicalTurn]) -> bool:
    """Send each turn's user input again; whether the replay stopped before the end."""
    for turn in turns:
        text, attachments = user_input(turn.user_messages[0])
        try:
            result = await session.send_message(text, attachments)
        except RelaviumError as error:  # e.g. the user started a turn there meanwhile
            _log.warning("replay into %s stopped: %s", session.id, error.message)
            return True
        if result.stop_reason in ("error", "aborted"):
            return True
    return False


def _log_failure(task: asyncio.Task[ReplayReport]) -> None:
    """A replay nobody waits for (``wait: false``) still says why it failed, in the log."""
    if not task.cancelled() and task.exception() is not None:
        _log.error("a replay failed", exc_info=task.exception())


def _refuse_side_effecting(registry: ToolRegistry, names: frozenset[str]) -> None:
    for name in sorted(names):
        definition = registry.get(name)
        if definition is not None and definition.replay == "side-effecting":
            raise InvalidInput(
                f"{name} changes the world (side-effecting): a replay never runs it live; "
                "its recorded result is used"
            )
