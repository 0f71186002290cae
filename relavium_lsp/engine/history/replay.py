"""Replay: re-run a session's turns through a throw-away engine against its own recordings.

The replay engine is this package's own parts over a temporary encrypted store with a random
key: its only model is the session's provider cassette and its tools answer from its tool
cassette (see :mod:`relavium_lsp.export.replay_cassettes`). It starts a session with the
original agent snapshot and context, sends each completed turn's user message again, and
compares the replayed transcript with the original (see :mod:`relavium_lsp.export.replay`
for what is replayed and how it is compared). Nothing of it outlives the replay.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.session import AgentSessionRecord, SessionMessage
from relavium_lsp.engine.collab.delegation import audit_replay
from relavium_lsp.engine.events.bus import EventBus
from relavium_lsp.engine.history.exports import full_transcript
from relavium_lsp.engine.scope import EngineServices
from relavium_lsp.engine.sessions.live import LiveSessions
from relavium_lsp.errors import ExportError, RelaviumError
from relavium_lsp.export.replay import (
    ReplayReport,
    TranscriptEntry,
    compare,
    replay_config,
    replayable,
    user_input,
)
from relavium_lsp.export.replay_cassettes import (
    ReplayToolDispatcher,
    provider_cassette,
    tool_cassette,
)
from relavium_lsp.export.turns import LogicalTurn, group_turns
from relavium_lsp.llm.cassette import CassetteProvider
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.media import MediaStore
from relavium_lsp.tools.host import EditorHost, FilesystemHost
from relavium_lsp.tools.registry import ToolRegistry, default_registry

REPLAY_PROVIDER_ID = "replay"
REPLAY_CONTEXT_WINDOW = 1_000_000


async def replay_session(
    services: EngineServices, live: LiveSessions, session_id: str, *, live_tools: bool = False
) -> ReplayReport:
    """Replay a stored session of this engine; the session itself is not touched."""
    record, messages = await full_transcript(services, session_id)
    try:
        policy = (await live.workspace_config(record.context.working_dir)).policy
    except (RelaviumError, OSError):
        # The workspace may be gone or its config broken: the replay still runs on defaults.
        policy = EffectiveChatPolicy()
    tools = services.tools
    report = await replay_transcript(
        record,
        messages,
        media=services.media,
        registry=tools if isinstance(tools, ToolRegistry) else default_registry(),
        policy=policy,
        live_tools=live_tools,
    )
    detail = f"replayed {report.turns_replayed} turns, {len(report.differences)} differences"
    await audit_replay(services.store, session_id, detail)
    return report


async def replay_transcript(
    record: AgentSessionRecord,
    messages: Sequence[SessionMessage],
    *,
    media: MediaStore,
    registry: ToolRegistry | None = None,
    policy: EffectiveChatPolicy | None = None,
    live_tools: bool = False,
    host: EditorHost | None = None,
) -> ReplayReport:
    """Replay a transcript (a stored session or an imported file) and compare the result."""
    try:
        agent = AgentDefinition.model_validate(record.agent_snapshot)
    except ValueError:
        raise ExportError("the session's agent snapshot is not a valid agent") from None
    turns = group_turns(messages)
    verdicts = [(turn, replayable(turn)) for turn in turns]
    chosen = [turn for turn, ok in verdicts if ok]
    skipped = [turn for turn, ok in verdicts if not ok]
    report = ReplayReport(
        turns_replayed=len(chosen),
        skipped_turn_sequences=[
            (turn.user_messages or turn.answers)[0].sequence_number for turn in skipped
        ],
        skipped_system_messages=sum(1 for message in messages if message.role == "system"),
        original=[
            TranscriptEntry.of(message)
            for turn in chosen
            for message in (*turn.user_messages, *turn.answers)
        ],
        replayed=[],
    )
    rig = _Rig(
        agent=agent,
        config=replay_config(agent, policy or EffectiveChatPolicy(), chosen),
        provider=CassetteProvider(
            REPLAY_PROVIDER_ID,
            provider_cassette(chosen),
            match="sequence",
            context_window=REPLAY_CONTEXT_WINDOW,
        ),
        model=record.model_id or REPLAY_PROVIDER_ID,
        dispatcher=ReplayToolDispatcher(
            registry or default_registry(), tool_cassette(messages), live_tools=live_tools
        ),
        media=media,
        host=host or FilesystemHost(),
    )
    workdir = Path(tempfile.mkdtemp(prefix="relavium-replay-"))
    try:
        replayed = await rig.run(record, chosen, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report.replayed = [TranscriptEntry.of(message) for message in replayed]
    report.live_tool_calls = rig.dispatcher.counters.live
    report.recorded_tool_calls = rig.dispatcher.counters.recorded
    report.differences = compare(report.original, report.replayed)
    return report


@dataclass
class _Rig:
    """The replay engine's parts: one cassette model, cassette tools, the replay policy."""

    agent: AgentDefinition
    config: WorkspaceConfig
    provider: CassetteProvider
    model: str
    dispatcher: ReplayToolDispatcher
    media: MediaStore
    host: EditorHost

    async def run(
        self, record: AgentSessionRecord, turns: Sequence[LogicalTurn], workdir: Path
    ) -> list[SessionMessage]:
        """Send each turn's user input to a fresh session; return what it stored."""
        # A throw-away database under a throw-away key: nothing outlives the replay.
        store = await AsyncSessionStore.open(workdir / "replay.db", DbKey(os.urandom(32), "env"))
        try:
            (workdir / "tools").mkdir()
            services = EngineServices(
                store=store,
                bus=EventBus(store),
                media=self.media,
                tools=self.dispatcher,
                host=self.host,
                temp_dir=workdir / "tools",
            )
            sessions = LiveSessions(
                services,
                resolve_chain=lambda _agent, _config: [ChainEntry(self.provider, self.model)],
                load_config=lambda _path: self.config,
            )
            session = await sessions.create(
                context=record.context,
                agent_ref=self.agent.id,
                title=record.title,
                source="replay",
            )
            try:
                for turn in turns:
                    text, attachments = user_input(turn.user_messages[0])
                    result = await session.send_message(text, attachments)
                    if result.stop_reason in ("error", "aborted"):
                        break
            finally:
                await session.abort()
                await services.bus.drain_all()
            return await store.run(lambda s: list(s.iter_messages(session.id)))
        finally:
            await store.close()
