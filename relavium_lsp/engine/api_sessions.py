"""The engine's front door, part 1: opening, resuming and driving sessions.

Starting and resuming sessions, sending messages, aborting and ending turns, compaction,
model choice and applying a code block; mixed into :class:`~relavium_lsp.engine.api.Engine`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from relavium_lsp.contracts.config import ApprovalMode
from relavium_lsp.contracts.content import ContentPart, ToolResultPart
from relavium_lsp.contracts.events import (
    CompactionReason,
    SessionCompacted,
    SessionStarted,
    SessionTrimmed,
    TokenUsage,
    TurnResult,
)
from relavium_lsp.contracts.plan import PlanEntry
from relavium_lsp.contracts.session import AgentSessionRecord, SessionContext, SessionMessage
from relavium_lsp.engine.api_base import EngineBase
from relavium_lsp.engine.compaction import CompactionMode
from relavium_lsp.engine.leases import LeaseSettings
from relavium_lsp.engine.model_memory import remember_choice
from relavium_lsp.engine.models import ModelChoice, first_choice, model_choices, with_first_model
from relavium_lsp.engine.snapshot import SessionSnapshot
from relavium_lsp.engine.user_edit import apply_user_edit, new_call_id
from relavium_lsp.errors import DatabaseCorrupted, InvalidInput, SessionBusy

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResumeResult:
    """A resumed session: its row, the history tail within budget, the newest event."""

    session: AgentSessionRecord
    messages: list[SessionMessage]
    last_event_sequence: int
    plan: list[PlanEntry] | None = None


class SessionDriving(EngineBase):
    """Opening and driving sessions (part of :class:`~relavium_lsp.engine.api.Engine`)."""

    # -- opening and driving sessions -------------------------------------------------------

    async def start(
        self,
        *,
        context: SessionContext,
        agent_ref: str | None = None,
        title: str | None = None,
        source: str = "cli",
        description: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> SessionSnapshot:
        """Open a new session for an agent (``session:started``)."""
        session = await self._live.create(
            context=context,
            agent_ref=agent_ref,
            title=title,
            source=source,
            description=description,
            metadata=metadata,
        )
        if self._triggers is not None:
            self._triggers.session_started(session.id, session.record.context.working_dir)
        return session.snapshot()

    async def session(self, session_id: str) -> SessionSnapshot:
        """A session as it is now, loaded (and a crashed turn recovered) if not served yet."""
        return (await self._live.get(session_id)).snapshot()

    async def resume(self, session_id: str) -> ResumeResult:
        """Reload a session (ended ones become idle again) with its history tail.

        A session another window is running is only read: its turn goes on untouched there,
        and this process follows it through the shared event log (docs/design.md §7.1).
        """
        session = await self._live.get(session_id)
        session.workspace_memory = None  # a resumed session is given the current memory
        elsewhere = await self._live.running_elsewhere(session_id)
        if elsewhere is None:
            await self._live.follow_stored_model(session)  # switched in another window?
            session.refresh(await self._live.require_record(session_id))
            if session.record.status == "ended":
                await session.set_status("idle")
        else:
            session.refresh(await self._live.require_record(session_id))
        snapshot = session.snapshot()
        budget = snapshot.context_window
        messages = await self._services.store.run(
            lambda s: s.load_tail_within_budget(session_id, budget)
        )
        if elsewhere is None:
            session.scope.emit(
                SessionStarted(
                    agent_ref=snapshot.agent.id,
                    model=snapshot.model,
                    context=snapshot.record.context,
                    resumed=True,
                )
            )
        try:
            last_event = await self._services.bus.last_sequence(session_id)
            plan = await self.plan(session_id)  # kept in the event log too
        except DatabaseCorrupted as error:
            # The messages are the transcript; a damaged event log must not lock a session
            # out (issue 16). Replays start from nothing; the log line names the file.
            logger.warning("resuming %s without its event log: %s", session_id, error.message)
            last_event, plan = 0, None
        return ResumeResult(
            session=session.record,
            messages=messages,
            last_event_sequence=last_event,
            plan=plan,
        )

    async def send(
        self, session_id: str, text: str, attachments: Sequence[ContentPart] = ()
    ) -> TurnResult:
        """Append the user's message and run one turn; returns when the turn settles.

        The answer streams as events meanwhile. Cancelling the caller aborts the turn.
        """
        session = await self._live.get(session_id)
        if self._triggers is not None and not await self._triggers.first_turn(session_id):
            # Aborted while it waited for the earlier sessions' passes: nothing was stored.
            return TurnResult(stop_reason="aborted", tokens_used=TokenUsage())
        return await session.send_message(text, attachments)

    async def abort(self, session_id: str) -> bool:
        """Abort the running turn of a session; ``False`` when none was running.

        A turn another process runs is asked to stop through the database (its heartbeat
        sees the request within one beat); this waits until it has let go of its lease.
        """
        served = self._live.served(session_id)
        if served is not None and served.busy:
            return await served.abort()
        if self._triggers is not None and self._triggers.abort_waiting(session_id):
            return True  # a new session's first turn, still waiting to begin
        await self._live.require_record(session_id)
        lease = await self._services.store.run(lambda s: s.request_abort(session_id))
        if lease is None:
            return False
        await self._wait_for_release(session_id, lease.owner_token)
        return True

    async def _wait_for_release(self, session_id: str, token: str) -> None:
        keeper = self._services.leases
        settings = keeper.settings if keeper is not None else LeaseSettings()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + settings.timeout_s + 2 * settings.heartbeat_s
        while loop.time() < deadline:
            lease = await self._live.recover(session_id)
            if lease is None or lease.owner_token != token:
                return
            # Polling the owner's lease row is the only channel between the processes.
            await asyncio.sleep(settings.heartbeat_s / 4)

    def is_running(self, session_id: str) -> bool:
        """Whether this process is running a turn of the session right now."""
        served = self._live.served(session_id)
        return served is not None and served.busy

    def running_turn_sequence(self, session_id: str) -> int | None:
        """The user message sequence of the turn this process runs in the session, if any.

        Another window's turn of the same session never matches (docs/design.md §7.1).
        """
        served = self._live.served(session_id)
        return served.turn_user_sequence if served is not None and served.busy else None

    async def cancel(self, session_id: str) -> None:
        """End a session (``session:cancelled``); it stays resumable by id."""
        session = await self._live.get(session_id)
        if not session.busy:
            await self._refuse_if_running_elsewhere(session_id, "end")
        await session.cancel()

    async def compact(
        self, session_id: str, *, mode: CompactionMode, reason: CompactionReason = "manual"
    ) -> SessionCompacted | SessionTrimmed:
        """Compact a session's visible history now; returns the terminal event."""
        if self._triggers is not None:
            await self._triggers.make_way(session_id)
        return await (await self._live.get(session_id)).compact(mode=mode, reason=reason)

    async def model_choices(self, session_id: str) -> list[ModelChoice]:
        """The models the session may ask first (see :mod:`relavium_lsp.engine.models`)."""
        session = await self._live.get(session_id)
        config = await self._live.workspace_config(session.record.context.working_dir)
        return model_choices(session.agent, config)

    async def set_model(self, session_id: str, choice_id: str) -> SessionSnapshot:
        """Ask ``choice_id`` (one of :meth:`model_choices`) first from the next turn on.

        The choice is stored with the session: a restarted server, or another window that
        opens the session, asks it too (:mod:`relavium_lsp.engine.model_memory`).
        """
        session = await self._live.get(session_id)
        if session.busy:
            raise SessionBusy(f"session {session_id} is running a turn; abort it first")
        config = await self._live.workspace_config(session.record.context.working_dir)
        choices = model_choices(session.agent, config)
        choice = next((choice for choice in choices if choice.id == choice_id), None)
        if choice is None:
            known = ", ".join(choice.id for choice in choices)
            raise InvalidInput(f"unknown model {choice_id[:200]!r} (known: {known})")
        chain = await self._live.chain_for(with_first_model(session.agent, choice), config)
        await remember_choice(self._services.store, session_id, choice)
        session.use_chain(chain)
        return session.snapshot()

    async def current_model(self, session_id: str) -> ModelChoice:
        """The model the session asks first now (after any :meth:`set_model`)."""
        return first_choice((await self._live.get(session_id)).chain)

    async def apply_code(self, session_id: str, path: str, content: str) -> ToolResultPart:
        """Write a code block the user applies, as the agent's ``write_file`` would.

        Same jail, approval and undoable editor edit as a turn's write (see
        :mod:`relavium_lsp.engine.user_edit`); the answer is the tool's result.
        """
        session = await self._live.get(session_id)
        if not session.busy:
            await self._refuse_if_running_elsewhere(session_id, "apply code to")
        return await apply_user_edit(session, path, content, new_call_id())

    def set_approval_override(self, mode: ApprovalMode | None) -> None:
        """The editor's own approval setting changed (``None``: the configuration's rules).

        Sessions opened (or loaded) from now on use it; running ones keep the policy they have.
        """
        self._live.set_approval_override(mode)
