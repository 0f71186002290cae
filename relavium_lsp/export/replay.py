"""Replay: re-run a session's turns through a real engine against its own recordings.

The replay builds a throw-away engine — a :class:`~relavium_lsp.engine.manager.
SessionManager` over a temporary encrypted store with a random key — whose only model is
the session's provider cassette and whose tools answer from its tool cassette (see
:mod:`.replay_cassettes`). It starts a session with the original agent snapshot and
context, sends each completed turn's user message again, and compares the replayed
transcript with the original one by role and content (ids and timestamps always differ).

What is replayed: completed logical turns with a single user message. Interrupted or
unanswered turns cannot be reproduced (nothing recorded what never happened) and system
rows (compaction boundaries, interruption markers) are not turns; both are reported as
skipped. The replay policy is the workspace's, with automatic compaction and the cost cap
switched off and the turn limits raised to what the original needed, so the engine does
exactly as many model calls as were recorded.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.content import (
    ContentPart,
    DurableMediaPart,
    DurableReasoningPart,
    MediaPart,
    ReasoningPart,
    TextPart,
)
from relavium_lsp.contracts.session import AgentSessionRecord, SessionMessage
from relavium_lsp.engine.bus import EventBus
from relavium_lsp.engine.manager import SessionManager
from relavium_lsp.engine.session import EngineServices
from relavium_lsp.errors import ExportError, RelaviumError
from relavium_lsp.export.replay_cassettes import (
    ReplayToolDispatcher,
    provider_cassette,
    tool_cassette,
)
from relavium_lsp.export.service import load_snapshot
from relavium_lsp.export.turns import LogicalTurn, group_turns
from relavium_lsp.llm.cassette import CassetteProvider
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.keys import DbKey
from relavium_lsp.store.media import MediaStore
from relavium_lsp.tools.host import EditorHost, FilesystemHost
from relavium_lsp.tools.registry import ToolRegistry, default_registry

REPLAY_PROVIDER_ID = "replay"
REPLAY_CONTEXT_WINDOW = 1_000_000


@dataclass(frozen=True)
class TranscriptEntry:
    """What a replay compares: a message's role and durable content (wire form)."""

    role: str
    content: list[dict[str, Any]]

    @classmethod
    def of(cls, message: SessionMessage) -> TranscriptEntry:
        """The comparable view of a stored message."""
        return cls(role=message.role, content=[part.to_wire() for part in message.content])


@dataclass
class ReplayReport:
    """How a replay went."""

    turns_replayed: int
    skipped_turn_sequences: list[int]
    skipped_system_messages: int
    original: list[TranscriptEntry]
    replayed: list[TranscriptEntry]
    live_tool_calls: int = 0
    recorded_tool_calls: int = 0
    differences: list[str] = field(default_factory=list)

    @property
    def matches(self) -> bool:
        """Whether the replayed transcript equals the original, message for message."""
        return not self.differences


def replayable(turn: LogicalTurn) -> bool:
    """A completed turn whose single user message can be sent again."""
    if not turn.completed or len(turn.user_messages) != 1:
        return False
    text, attachments = user_input(turn.user_messages[0])
    return bool(text.strip() or attachments)


def user_input(message: SessionMessage) -> tuple[str, list[ContentPart]]:
    """``send_message`` arguments that make the engine store ``message``'s content again."""
    parts = list(message.content)
    first = parts[0] if parts else None
    text = first.text if isinstance(first, TextPart) else ""
    attachments: list[ContentPart] = []
    for part in parts[1:] if isinstance(first, TextPart) else parts:
        if isinstance(part, DurableMediaPart):
            attachments.append(
                MediaPart(mime_type=part.mime_type, source=part.source, name=part.name)
            )
        elif isinstance(part, DurableReasoningPart):
            attachments.append(ReasoningPart(text=part.text, redacted=part.redacted))
        else:
            attachments.append(part)
    return text, attachments


async def replay_session(
    manager: SessionManager, session_id: str, *, live_tools: bool = False
) -> ReplayReport:
    """Replay a stored session (see the module doc); the session itself is not touched."""
    record, messages = await load_snapshot(manager, session_id)
    try:
        policy = (await manager.workspace_config(record.context.working_dir)).policy
    except (RelaviumError, OSError):
        # The workspace may be gone or its config broken: the replay still runs on defaults.
        policy = EffectiveChatPolicy()
    tools = manager.services.tools
    return await replay_transcript(
        record,
        messages,
        media=manager.services.media,
        registry=tools if isinstance(tools, ToolRegistry) else default_registry(),
        policy=policy,
        live_tools=live_tools,
    )


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
        config=_replay_config(agent, policy or EffectiveChatPolicy(), chosen),
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
            manager = SessionManager(
                services,
                resolve_chain=lambda _agent, _config: [ChainEntry(self.provider, self.model)],
                load_config=lambda _path: self.config,
            )
            session = await manager.start(
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
                await manager.close()
            return await store.run(lambda s: list(s.iter_messages(session.id)))
        finally:
            await store.close()


def _replay_config(
    agent: AgentDefinition, policy: EffectiveChatPolicy, turns: Sequence[LogicalTurn]
) -> WorkspaceConfig:
    rounds = max(
        (sum(1 for message in turn.answers if message.role == "assistant") for turn in turns),
        default=1,
    )
    replay_policy = policy.model_copy(
        update={
            "max_turns": max(policy.max_turns, len(turns) + 1),
            "max_tool_turns": max(policy.max_tool_turns, rounds),
            "max_messages": None,
            "auto_compact": False,
            "max_cost_microcents": None,
        }
    )
    return WorkspaceConfig(
        agents={agent.id: agent}, policy=replay_policy, providers={}, default_model=None
    )


def compare(original: Sequence[TranscriptEntry], replayed: Sequence[TranscriptEntry]) -> list[str]:
    """Human-readable differences between two transcripts (empty when they are equal)."""
    differences: list[str] = []
    for position, (before, after) in enumerate(zip(original, replayed, strict=False), start=1):
        if before.role != after.role:
            differences.append(f"message {position}: role {before.role} became {after.role}")
        elif before.content != after.content:
            differences.append(f"message {position} ({before.role}): content differs")
    if len(original) != len(replayed):
        differences.append(
            f"the original has {len(original)} message(s), the replay {len(replayed)}"
        )
    return differences
