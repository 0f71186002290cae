"""The engine's front door, part 2: managing stored history.

Renaming, details, notes, deleting and restoring, artifacts, handoffs, introspection
checkpoints, forks, file checkpoints and rewind (docs/design.md §6.3), and imports; mixed into
:class:`~relavium_lsp.engine.api.Engine`.
"""

from __future__ import annotations

from typing import Any, Literal

from relavium_lsp.contracts.events import CheckpointReason, SessionCheckpoint
from relavium_lsp.contracts.review import (
    CheckpointContentResult,
    ReviewChangesResult,
    ReviewDecision,
    TurnChangesResult,
)
from relavium_lsp.contracts.rewind import RewindResult, TurnCheckpoint
from relavium_lsp.contracts.session import AgentSessionRecord, HandoffRecord, SessionMessage
from relavium_lsp.contracts.session_ops import ArtifactInfo
from relavium_lsp.engine import exports, introspection, session_admin, turn_review
from relavium_lsp.engine.api_base import EngineBase
from relavium_lsp.engine.rewind import list_turn_checkpoints
from relavium_lsp.engine.rewind import rewind as rewind_session
from relavium_lsp.engine.rewind import undo_rewind as undo_session_rewind
from relavium_lsp.engine.session_admin import KEEP, Keep
from relavium_lsp.errors import SessionBusy
from relavium_lsp.store.checkpoints import list_checkpoints
from relavium_lsp.store.file_checkpoints import delete_session_checkpoints
from relavium_lsp.store.session_ops import PurgeReport
from relavium_lsp.tools.host import EditorHost


class HistoryManagement(EngineBase):
    """Managing history (part of :class:`~relavium_lsp.engine.api.Engine`)."""

    # -- managing history -------------------------------------------------------------------

    async def rename(self, session_id: str, title: str) -> None:
        """Set a session's title."""
        await self._live.require_record(session_id)
        await self._services.store.run(lambda s: s.rename_session(session_id, title))
        served = self._live.served(session_id)
        if served is not None:
            served.record = served.record.model_copy(update={"title": title})

    async def update_details(
        self,
        session_id: str,
        *,
        description: str | Keep | None = KEEP,
        metadata: dict[str, Any] | Keep | None = KEEP,
    ) -> AgentSessionRecord:
        """Set a session's description (written by the user) and/or metadata."""
        return await session_admin.update_details(
            self._services, self._live, session_id, description=description, metadata=metadata
        )

    async def append_note(
        self, session_id: str, role: Literal["user", "system"], text: str
    ) -> SessionMessage:
        """Add a user or system note to the transcript without calling the model."""
        note = await session_admin.append_note(self._services, self._live, session_id, role, text)
        if self._triggers is not None:
            self._triggers.activity(session_id)
        return note

    async def restore(self, session_id: str) -> AgentSessionRecord:
        """Undo a soft delete."""
        return await session_admin.restore(self._services, session_id)

    async def purge(self, session_id: str) -> PurgeReport:
        """Erase a session and its delegated children for good (rows, index, media)."""
        if self._triggers is not None:
            await self._triggers.forget(session_id)
        return await session_admin.purge(self._services, self._live, session_id)

    async def list_artifacts(self, session_id: str) -> list[ArtifactInfo]:
        """A session's stored full tool outputs, oldest first."""
        return await session_admin.list_artifacts(self._services, self._live, session_id)

    async def list_handoffs(self, session_id: str) -> list[HandoffRecord]:
        """The delegations a session made (to child sessions), oldest first."""
        await self._live.require_record(session_id)
        return await self._services.store.run(lambda s: s.list_handoffs(session_id))

    async def checkpoint(
        self, session_id: str, reason: CheckpointReason = "manual"
    ) -> SessionCheckpoint:
        """Run an introspection pass (one model call) and record the checkpoint."""
        if self._triggers is not None:
            await self._triggers.make_way(session_id)
        return await introspection.checkpoint(await self._live.get(session_id), reason)

    async def list_introspections(self, session_id: str) -> list[SessionCheckpoint]:
        """A session's introspection checkpoints, oldest first."""
        await self._live.require_record(session_id)
        return await self._services.store.run(lambda s: list_checkpoints(s, session_id))

    async def delete(self, session_id: str) -> None:
        """Soft-delete a session (refused while a turn runs)."""
        served = self._live.served(session_id)
        if served is not None and served.busy:
            raise SessionBusy(f"session {session_id} is running a turn; abort it first")
        await self._live.require_record(session_id)
        if self._triggers is not None:
            await self._triggers.forget(session_id)
        clock = self._live.clock()
        await self._services.store.run(lambda s: s.soft_delete_session(session_id, clock=clock))
        # A deleted session's file checkpoints go with it (their blobs unless shared).
        await self._services.store.run(
            lambda s: delete_session_checkpoints(s.connection, session_id)
        )
        self._live.forget(session_id)

    async def fork(self, session_id: str, at_sequence: int) -> str:
        """Branch a session at one of its messages; returns the new session's id."""
        return await exports.fork(self._services, await self.record(session_id), at_sequence)

    # -- checkpoints and rewind (docs/design.md §6.3) ---------------------------------------

    async def list_checkpoints(self, session_id: str) -> list[TurnCheckpoint]:
        """The file checkpoints of a session's turns, oldest first."""
        return await list_turn_checkpoints(self._services.store, await self.record(session_id))

    async def rewind(
        self,
        session_id: str,
        to_sequence: int,
        *,
        files: bool = True,
        conversation: bool = True,
        host: EditorHost | None = None,
        paths: list[str] | None = None,
    ) -> RewindResult:
        """Rewind files and/or the conversation to before a turn (§6.3).

        ``to_sequence`` is the turn's user message; refused while a turn runs; ``host``
        overrides the engine's editor host (ACP restores on disk); ``paths`` limits the files.
        """
        self._refuse_busy(session_id)
        if self._triggers is not None:
            await self._triggers.make_way(session_id)
        record = await self.record(session_id)
        return await rewind_session(
            self._services,
            record,
            to_sequence,
            files=files,
            conversation=conversation,
            host=host or self._services.host,
            roots=await self._session_roots(session_id),
            paths=paths,
        )

    async def undo_rewind(
        self, session_id: str, rewind_id: str, *, host: EditorHost | None = None
    ) -> RewindResult:
        """Put back what a rewind of this session (or of the session it forked) replaced."""
        self._refuse_busy(session_id)
        record = await self.record(session_id)
        return await undo_session_rewind(
            self._services,
            record,
            rewind_id,
            host=host or self._services.host,
            roots=await self._session_roots(session_id),
        )

    # -- reviewing a turn's changes (docs/design.md §6.4) ------------------------------------

    async def turn_changes(
        self, session_id: str, user_sequence: int | None = None, *, host: EditorHost | None = None
    ) -> TurnChangesResult:
        """The files a turn changed, with line counts and their review (default: latest turn)."""
        record = await self.record(session_id)
        return await turn_review.turn_changes(
            self._services, record, host or self._services.host, user_sequence
        )

    async def checkpoint_content(
        self, session_id: str, user_sequence: int, path: str
    ) -> CheckpointContentResult:
        """A file's text before the turn of ``user_sequence`` changed it."""
        return await turn_review.checkpoint_content(
            self._services, await self.record(session_id), user_sequence, path
        )

    async def review_changes(
        self,
        session_id: str,
        user_sequence: int,
        decision: ReviewDecision,
        paths: list[str] | None = None,
        *,
        host: EditorHost | None = None,
    ) -> ReviewChangesResult:
        """Keep or undo files a turn changed (undo: refused while a turn runs)."""
        if decision == "undo":
            self._refuse_busy(session_id)
        return await turn_review.review_changes(
            self._services,
            await self.record(session_id),
            host or self._services.host,
            user_sequence,
            decision,
            paths,
            await self._session_roots(session_id),
        )

    async def import_jsonl(self, text: str) -> str:
        """Create a new session from a ``relavium-session/1.0`` transcript; returns its id."""
        return await exports.import_transcript(self._services, text)
