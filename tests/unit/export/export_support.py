"""Builders shared by the export tests: records, messages, and a real engine to drive."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from relavium_lsp.contracts.agent import DEFAULT_AGENT
from relavium_lsp.contracts.content import DurableContentPart, TextPart
from relavium_lsp.contracts.session import (
    AgentSessionRecord,
    CompactionMarker,
    InterruptionMarker,
    MessageRole,
    SessionContext,
    SessionMessage,
)
from relavium_lsp.engine.api import Engine, ExportFormat, ExportOutcome, open_engine
from relavium_lsp.llm.cassette import CASSETTE_FORMAT, CassetteProvider, RecordedCall
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.llm.seam import LlmChunk
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.tools.host import Approver, FilesystemHost, reject_all

SESSION_ID = "0b7c2a51-5f0e-4c1e-9a57-3f1d2e8b6c40"
CREATED = "2025-03-01T09:00:00.000Z"
SCRIPTED_MODEL = "scripted-model"


def make_record(
    *,
    session_id: str = SESSION_ID,
    title: str | None = "A session",
    snapshot: dict[str, Any] | None = None,
    working_dir: str = "/work/project",
    turn_count: int = 0,
) -> AgentSessionRecord:
    return AgentSessionRecord(
        id=session_id,
        agent_slug=DEFAULT_AGENT.id,
        agent_snapshot=DEFAULT_AGENT.model_dump(mode="json") if snapshot is None else snapshot,
        title=title,
        model_id="claude-sonnet-4-5",
        context=SessionContext(working_dir=working_dir),
        source="vscode",
        turn_count=turn_count,
        created_at=CREATED,
        updated_at=CREATED,
    )


class Transcript:
    """Appends messages with consecutive sequence numbers and minute-spaced timestamps."""

    def __init__(self, session_id: str = SESSION_ID) -> None:
        self.session_id = session_id
        self.messages: list[SessionMessage] = []

    def add(
        self,
        role: MessageRole,
        content: Sequence[DurableContentPart] | str,
        *,
        model_id: str | None = None,
        compaction: CompactionMarker | None = None,
        interruption: InterruptionMarker | None = None,
    ) -> SessionMessage:
        sequence = len(self.messages) + 1
        parts = [TextPart(text=content)] if isinstance(content, str) else list(content)
        if model_id is None and role == "assistant":
            model_id = "claude-sonnet-4-5"
        message = SessionMessage(
            id=f"msg-{sequence:04d}",
            session_id=self.session_id,
            sequence_number=sequence,
            role=role,
            content=parts,
            model_id=model_id,
            compaction=compaction,
            interruption=interruption,
            timestamp=f"2025-03-01T09:{sequence // 60:02d}:{sequence % 60:02d}.000Z",
        )
        self.messages.append(message)
        return message


def scripted_cassette(calls: Sequence[Sequence[LlmChunk]]) -> dict[str, Any]:
    """A cassette document that answers call n with ``calls[n]`` (match by sequence)."""
    recorded = [
        RecordedCall(request={"prompt": "", "tools_called": []}, chunks=tuple(chunks))
        for chunks in calls
    ]
    return {"format": CASSETTE_FORMAT, "calls": [call.to_json() for call in recorded]}


@dataclass
class Rig:
    """A real engine over a real encrypted store in a temp directory.

    ``store`` is a second connection to the same database, for reading and planting rows.
    """

    engine: Engine
    store: AsyncSessionStore
    db_path: Path
    key: DbKey

    async def close(self) -> None:
        await self.engine.close()
        await self.store.close()


async def open_rig(
    home: Path,
    calls: Sequence[Sequence[LlmChunk]] = (),
    *,
    approver: Approver = reject_all,
    key: DbKey | None = None,
) -> Rig:
    """Open an engine whose only model replays ``calls`` in order."""
    key = key or DbKey(os.urandom(32), "env")
    db_path = home / "history.db"
    provider = CassetteProvider("scripted", scripted_cassette(calls), match="sequence")
    engine = await open_engine(
        FilesystemHost(approver),
        history_path=db_path,
        db_key=key,
        providers=lambda _agent, _config: [ChainEntry(provider, SCRIPTED_MODEL)],
    )
    store = await AsyncSessionStore.open(db_path, key)
    return Rig(engine=engine, store=store, db_path=db_path, key=key)


async def export_untitled(
    engine: Engine, session_id: str, fmt: ExportFormat = "workflow"
) -> ExportOutcome:
    """Export a session and record it as ``untitled`` (what the CLI does for stdout)."""
    outcome = await engine.render_export(session_id, fmt)
    await engine.announce_export(session_id, fmt)
    return outcome
