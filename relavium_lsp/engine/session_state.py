"""What a live session holds: its row, agent, policy, model chain, scope and turn state.

The base of ``AgentSession`` (``engine/session.py``): construction, the simple properties
(``busy``, ``evictable``), the frozen snapshot, switching the model chain, taking a fresher
stored row and persisting a status.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.events import TurnResult
from relavium_lsp.contracts.session import AgentSessionRecord, SessionStatus
from relavium_lsp.engine.compaction import Compactor
from relavium_lsp.engine.governor import CostGovernor
from relavium_lsp.engine.scope import EngineServices, SessionScope
from relavium_lsp.engine.snapshot import SessionSnapshot
from relavium_lsp.engine.turn_watch import TurnWatch
from relavium_lsp.errors import DiskFull
from relavium_lsp.llm.fallback import ChainEntry

_log = logging.getLogger(__name__)


class SessionState:
    """The state of one session being served by this process (base of ``AgentSession``)."""

    def __init__(
        self,
        record: AgentSessionRecord,
        *,
        agent: AgentDefinition,
        policy: EffectiveChatPolicy,
        chain: Sequence[ChainEntry],
        services: EngineServices,
    ) -> None:
        self.record = record
        self.agent = agent
        self.policy = policy
        self.chain = tuple(chain)
        self._turn: asyncio.Task[TurnResult] | None = None
        # A code block the user applies (``engine/user_edit.py``) keeps turns out meanwhile.
        self.user_edit: asyncio.Future[Any] | None = None
        # Held only so the background checkpoint task is not garbage-collected mid-flight.
        self._checkpoint: asyncio.Future[None] | None = None
        self._checkpoint_timer: asyncio.TimerHandle | None = None
        self.last_input_tokens: int | None = None
        # The window a provider's refusal showed the model really has (§2.3; None: as listed).
        self.learned_context_window: int | None = None
        # The newest checkpoint's working memory, given with every turn (None: not read yet).
        self.working_memory: str | None = None
        # The workspace's long-term memory, read at the first turn here (None: not read yet).
        self.workspace_memory: str | None = None
        # The running turn's lease (docs/design.md §7.1): its token, its heartbeat, and
        # whether another process took it over (then this turn must leave the store alone).
        self._lease_token: str | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self._lease_lost = False
        self._in_turn_body = False  # a heartbeat may stop the turn only while it runs
        # The running turn's user message sequence here (None between turns): tells this
        # process's own session:turn_started from one another window's turn emitted.
        self.turn_user_sequence: int | None = None
        # Told around every turn (the automatic introspection passes; None: nobody).
        self.turn_watch: TurnWatch | None = None
        self.scope = SessionScope(
            services,
            record.id,
            approval_timeout_s=policy.approval_timeout_s,
            set_status=self.set_status,
        )
        self.governor = CostGovernor(self.scope, policy=policy, totals=record.totals)
        self._compactor = Compactor(self.scope, self.governor)

    @property
    def id(self) -> str:
        """The session id."""
        return self.record.id

    @property
    def busy(self) -> bool:
        """Whether a turn (or a user's code-block edit) is running."""
        if self.user_edit is not None and not self.user_edit.done():
            return True
        return self._turn is not None and not self._turn.done()

    async def until_idle(self) -> None:
        """Wait until no turn or code-block edit runs (queued peer messages wait so)."""
        while self.busy:
            running: set[asyncio.Future[Any]] = {
                work
                for work in (self._turn, self.user_edit)
                if work is not None and not work.done()
            }
            await asyncio.wait(running)

    @property
    def evictable(self) -> bool:
        """Whether dropping this object loses nothing the store does not hold (see live.py)."""
        return not self.busy and self._lease_token is None and not self.scope.approvals.remembered()

    def snapshot(self) -> SessionSnapshot:
        """The session as it is now (row, agent, policy, chain), frozen."""
        return SessionSnapshot(
            record=self.record,
            agent=self.agent,
            policy=self.policy,
            chain=self.chain,
            working_memory=self.working_memory or "",
            workspace_memory=self.workspace_memory or "",
            learned_context_window=self.learned_context_window,
        )

    def context_window(self) -> int:
        """The first model's context window in tokens."""
        return self.snapshot().context_window

    def use_chain(self, chain: Sequence[ChainEntry]) -> None:
        """Ask another model chain from the next turn on (the row names its first model)."""
        self.chain = tuple(chain)
        self.record = self.record.model_copy(update={"model_id": self.chain[0].model})
        self.learned_context_window = None  # another model: its own window

    def refresh(self, record: AgentSessionRecord) -> None:
        """Take the stored row (another process may have run turns meanwhile) while idle here.

        The model this process chose for the session (:meth:`use_chain`) stays.
        """
        if self.busy:
            return
        self.record = record.model_copy(update={"model_id": self.record.model_id})
        self.governor.totals = record.totals

    async def set_status(self, status: SessionStatus) -> None:
        """Persist a status change."""
        if self._lease_lost:
            return  # another process took the turn over and settled the session
        if self.record.status != status:
            self.record = self.record.model_copy(update={"status": status})
            try:
                await self.scope.store.run(lambda s: s.set_status(self.id, status))
            except DiskFull as error:  # the live status is right; the row catches up later
                _log.warning("could not save status %s: %s", status, error.message)
