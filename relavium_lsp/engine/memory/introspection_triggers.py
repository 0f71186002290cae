"""Automatic introspection passes (seed 002, ``docs/design.md`` §2.5): when they run by themselves.

:mod:`relavium_lsp.engine.memory.introspection` does one pass; this module decides *when*, for the
three automatic reasons, under the workspace's ``[introspection]`` table:

- ``new_session`` — a new session starts in a workspace: the workspace's earlier top-level
  sessions with messages no checkpoint covers yet (the newest few, oldest first) are
  checkpointed, so what they learned is written down before the new one goes on;
- ``turn_limit`` — after a turn, once ``every_turns`` turns settled since the last checkpoint,
  or when the session reached its ``max_turns``;
- ``idle`` — ``idle_seconds`` after the last activity (a turn, a note) on a session; any new
  activity starts the delay again. Off for sessions whose model costs money unless
  ``idle_on_paid_providers`` is set
  (:func:`~relavium_lsp.engine.memory.introspection_policy.costs_money`).

Passes run one at a time per process in a background worker, never on a turn's critical path:
a turn that begins cancels its session's queued or running pass (the user never waits for
one; the next trigger tries again) and no pass starts while a turn runs. A pass holds the
session's lease like compaction does, with a heartbeat, so another window's turn, compaction
or pass cannot run meanwhile; once it holds the lease it asks the durable log again whether
anything is left to introspect, so two processes that both decided to checkpoint a session
record it once. A pass that fails is logged and recorded as ``session:checkpoint_failed``; the
session is untouched. Closing the engine, and deleting a session, cancel what is pending.

Time enters only through :class:`Timers` (tests inject a fake one and advance it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.events import CheckpointReason, SessionCheckpointFailed
from relavium_lsp.contracts.introspection_config import EffectiveIntrospection
from relavium_lsp.engine.memory import introspection
from relavium_lsp.engine.memory.introspection_policy import (
    idle_passes_allowed,
    pass_is_allowed,
    pass_is_due,
)
from relavium_lsp.engine.sessions.live import LiveSessions
from relavium_lsp.engine.sessions.session import AgentSession
from relavium_lsp.engine.waiting import LoopTimers, Timer, Timers, finish_before_cancelling
from relavium_lsp.errors import (
    RelaviumError,
    SessionNotFound,
    SessionRunningElsewhere,
    StoreError,
)
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.rows.event_reads import PendingWork, earlier_sessions, pending_work

_log = logging.getLogger(__name__)
# A new session checkpoints at most this many earlier sessions (the most recently active of
# those with something new), looking at this many of the workspace's newest sessions: a
# history of hundreds of sessions must not turn one new session into hundreds of model calls.
MAX_EARLIER_SESSIONS = 3
EARLIER_SESSIONS_SCANNED = 20
# How long a new session's first turn waits for the earlier sessions' passes at most (a hung
# provider must not hold the user's first message for its whole timeout).
FIRST_TURN_WAIT_S = 60.0
Job = tuple[str, CheckpointReason]


class IntrospectionTriggers:
    """Schedules and runs the automatic passes of one engine (see the module doc)."""

    def __init__(
        self, live: LiveSessions, store: AsyncSessionStore, *, timers: Timers | None = None
    ) -> None:
        self._live = live
        self._store = store
        self._timers: Timers = timers or LoopTimers()
        self._idle: dict[str, Timer] = {}
        self._queue: dict[Job, None] = {}  # FIFO, one entry per (session, reason)
        self._worker: asyncio.Task[None] | None = None
        self._current: tuple[str, asyncio.Task[None]] | None = None
        self._turns: dict[str, int] = {}  # sessions with a turn beginning or running here
        self._background: set[asyncio.Task[None]] = set()
        # Per session: (its turn_count, turns since its checkpoint) at the last look, so that
        # a turn asks the log only when a turn_limit pass may be due (an upper bound: other
        # windows' checkpoints only lower the real count).
        self._turns_seen: dict[str, tuple[int, int]] = {}
        # Each queued or running job's completion, and per new session the scan that looks for
        # earlier sessions plus the jobs it queued: its first turn waits for them.
        self._done: dict[Job, asyncio.Future[None]] = {}
        self._new_sessions: dict[str, tuple[asyncio.Task[None], list[asyncio.Future[None]]]] = {}
        # New sessions whose first turn waits; resolving the future aborts that turn.
        self._first_turn_aborts: dict[str, asyncio.Future[None]] = {}
        # Decisions are made one at a time, in the order the activity happened (an asyncio
        # lock is fair), so timers are armed and passes queued in that order too.
        self._deciding = asyncio.Lock()
        self._closed = False

    # -- what the engine tells it -----------------------------------------------------------

    def session_started(self, session_id: str, working_dir: str | None) -> None:
        """A new session was opened: checkpoint the workspace's earlier sessions."""
        if working_dir is None:
            return
        waits: list[asyncio.Future[None]] = []
        scan = self._spawn(self._earlier_sessions(session_id, working_dir, waits))
        if scan is not None:
            self._new_sessions = {
                new_id: entry
                for new_id, entry in self._new_sessions.items()
                if not (entry[0].done() and all(future.done() for future in entry[1]))
            }
            self._new_sessions[session_id] = (scan, waits)

    async def first_turn(self, session_id: str) -> bool:
        """The editor sends a message: if it is a new session's first, wait for its passes.

        It waits (at most :data:`FIRST_TURN_WAIT_S`) for the passes the session's start
        queued, so what the earlier sessions learned is in the workspace's memory before it
        is read for this session. ``False``: the turn was aborted while it waited
        (:meth:`abort_waiting`) and must not start.
        """
        return await self._first_turn(session_id)

    async def turn_begins(self, session_id: str) -> None:
        """A turn is about to start here (any turn: the session tells, see ``TurnWatch``).

        Nothing of this session may run or stay queued meanwhile.
        """
        self._turns[session_id] = self._turns.get(session_id, 0) + 1
        try:
            await self._stop(session_id)
        except BaseException:
            self._turn_over(session_id)  # the turn will not start
            raise

    def abort_waiting(self, session_id: str) -> bool:
        """Abort a first turn that still waits for the earlier sessions' passes."""
        abort = self._first_turn_aborts.get(session_id)
        if abort is None or abort.done():
            return False
        abort.set_result(None)
        return True

    @property
    def waiting_first_turn(self) -> frozenset[str]:
        """The new sessions whose first turn waits (for tests and diagnostics)."""
        return frozenset(self._first_turn_aborts)

    async def _first_turn(self, session_id: str) -> bool:
        entry = self._new_sessions.pop(session_id, None)
        if entry is None:
            return True
        abort = self._first_turn_aborts[session_id] = asyncio.get_running_loop().create_future()
        passes = asyncio.ensure_future(_passes_done(*entry))
        try:
            await asyncio.wait(
                {passes, abort}, timeout=FIRST_TURN_WAIT_S, return_when=asyncio.FIRST_COMPLETED
            )
            return not abort.done()
        finally:
            passes.cancel()
            self._first_turn_aborts.pop(session_id, None)

    def turn_settled(self, session_id: str) -> None:
        """A turn settled (completed, failed or aborted): activity; maybe a turn_limit pass."""
        self._turn_over(session_id)
        self._spawn(self._after_activity(session_id, turn=True))

    def _turn_over(self, session_id: str) -> None:
        count = self._turns.get(session_id, 0) - 1
        if count > 0:
            self._turns[session_id] = count
        else:
            self._turns.pop(session_id, None)

    def activity(self, session_id: str) -> None:
        """Something other than a turn added to the session (a note): the idle delay restarts."""
        self._spawn(self._after_activity(session_id, turn=False))

    async def forget(self, session_id: str) -> None:
        """The session is being deleted: cancel its timer, its queued and running pass."""
        self._turns_seen.pop(session_id, None)
        self._new_sessions.pop(session_id, None)
        await self._stop(session_id)

    async def make_way(self, session_id: str) -> None:
        """Compaction, a manual checkpoint or a rewind is about to start: stop the pass.

        The session's next activity arms its triggers again.
        """
        await self._stop(session_id)

    async def drain(self, *, passes: bool = True) -> None:
        """Wait until the decisions taken so far (and, with ``passes``, the passes) are done.

        For tests: nothing here needs it for correctness.
        """
        while True:
            tasks = set(self._background)
            if passes and self._worker is not None:
                tasks.add(self._worker)
            tasks = {task for task in tasks if not task.done()}
            if not tasks:
                return
            await asyncio.wait(tasks)

    async def close(self) -> None:
        """Cancel every timer, queued and running pass (the engine is shutting down)."""
        self._closed = True
        for timer in self._idle.values():
            timer.cancel()
        self._idle.clear()
        self._queue.clear()
        for job in list(self._done):
            self._finished(job)
        tasks = [*self._background]
        if self._worker is not None:
            tasks.append(self._worker)
        if self._current is not None:
            tasks.append(self._current[1])
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    @property
    def idle_timers(self) -> frozenset[str]:
        """The sessions with an idle timer armed (for tests and diagnostics)."""
        return frozenset(self._idle)

    # -- deciding ---------------------------------------------------------------------------

    async def _earlier_sessions(
        self, new_id: str, working_dir: str, waits: list[asyncio.Future[None]]
    ) -> None:
        async with self._deciding:
            await self._find_earlier_sessions(new_id, working_dir, waits)

    async def _find_earlier_sessions(
        self, new_id: str, working_dir: str, waits: list[asyncio.Future[None]]
    ) -> None:
        settings = await self._settings(working_dir)
        if settings is None or not (settings.enabled and settings.on_new_session):
            return
        candidates = await self._store.run(
            lambda s: earlier_sessions(
                s.connection, working_dir, exclude=new_id, limit=EARLIER_SESSIONS_SCANNED
            )
        )
        picked: list[str] = []
        for candidate in candidates:
            work = await self._pending(candidate)
            if work.fresh_messages > 0:
                picked.append(candidate)
            if len(picked) == MAX_EARLIER_SESSIONS:
                break
        for candidate in reversed(picked):  # oldest first: memory is written in order
            done = self._enqueue(candidate, "new_session")
            if done is not None:
                waits.append(done)

    async def _after_activity(self, session_id: str, *, turn: bool) -> None:
        async with self._deciding:
            await self._decide(session_id, turn=turn)

    async def _decide(self, session_id: str, *, turn: bool) -> None:
        session = self._live.served(session_id)
        if session is None or session.record.parent_session_id is not None:
            return  # a delegated child's work reaches its parent through the parent's turn
        config = await self._config(session)
        if config is None or not config.introspection.enabled:
            return
        settings = config.introspection
        # A turn that began since this one settled decides when it settles in its turn: its
        # count is in the record already, its completion not yet in the log, and remembering
        # that mismatch would delay the next pass by one turn.
        if turn and not self._turns.get(session_id) and self._may_be_due(session, settings):
            count = session.record.turn_count
            work = await self._pending(session_id)
            if self._turns.get(session_id):
                return
            self._turns_seen[session_id] = (count, work.turns)
            if pass_is_due("turn_limit", work, settings, session):
                self._enqueue(session_id, "turn_limit")
        if self._closed or self._turns.get(session_id):
            return  # a new turn began meanwhile: it restarts the delay when it settles
        self._cancel_idle(session_id)
        if settings.idle_seconds > 0 and idle_passes_allowed(settings, session, config):
            self._idle[session_id] = self._timers.call_later(
                settings.idle_seconds, lambda: self._idle_elapsed(session_id)
            )

    def _idle_elapsed(self, session_id: str) -> None:
        self._idle.pop(session_id, None)
        self._enqueue(session_id, "idle")

    def _enqueue(self, session_id: str, reason: CheckpointReason) -> asyncio.Future[None] | None:
        """Queue a pass (once per session and reason); its completion, or None if refused."""
        if self._closed or self._turns.get(session_id):
            return None
        job = (session_id, reason)
        self._queue[job] = None
        done = self._done.get(job)
        if done is None:
            done = self._done[job] = asyncio.get_running_loop().create_future()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work())
        return done

    def _finished(self, job: Job) -> None:
        done = self._done.pop(job, None)
        if done is not None and not done.done():
            done.set_result(None)

    # -- running ----------------------------------------------------------------------------

    async def _work(self) -> None:
        while self._queue and not self._closed:
            job = next(iter(self._queue))
            del self._queue[job]
            task = asyncio.create_task(self._run(*job))
            self._current = (job[0], task)
            try:
                await asyncio.wait({task})
            finally:
                self._current = None
                self._finished(job)

    async def _run(self, session_id: str, reason: CheckpointReason) -> None:
        try:
            session = await self._live.get(session_id)
        except SessionNotFound:
            return  # deleted meanwhile
        if self._busy(session):
            return
        try:
            config = await self._live.workspace_config(session.record.context.working_dir)
            settings = config.introspection
            if not pass_is_allowed(reason, settings, session, config):
                return
            work = await self._pending(session_id)
            if pass_is_due(reason, work, settings, session):
                await self._pass(session, reason, settings)
        except asyncio.CancelledError:
            raise
        except RelaviumError as error:
            await self._failed(session, reason, error.message)
        except Exception:
            _log.exception("automatic %s introspection of session %s failed", reason, session_id)
            await self._failed(session, reason, "an internal error stopped the pass (see the log)")

    async def _pass(
        self, session: AgentSession, reason: CheckpointReason, settings: EffectiveIntrospection
    ) -> None:
        """One pass under the session's lease, if there is still something to introspect."""
        scope = session.scope
        leases = scope.leases
        if leases is None:
            await introspection.checkpoint_held(session, reason)
            return
        token = leases.new_token()
        clock = leases.clock()

        async def release() -> None:
            await finish_before_cancelling(scope.give_back_lease(token))
            leases.drop_token(token)

        try:
            await finish_before_cancelling(scope.hold_lease(token, clock))
        except SessionRunningElsewhere:
            leases.drop_token(token)
            _log.debug("session %s is busy in another window: no %s pass", session.id, reason)
            return
        except asyncio.CancelledError:
            await release()  # cancelled only after the lease was taken: give it back
            raise
        except BaseException:
            leases.drop_token(token)
            raise
        heartbeat = leases.heartbeat(session.id, token, _canceller(asyncio.current_task()))
        try:
            # Another window may have recorded this very checkpoint a moment ago.
            work = await self._pending(session.id)
            if not self._busy(session) and pass_is_due(reason, work, settings, session):
                await introspection.checkpoint_held(session, reason)
        finally:
            heartbeat.cancel()
            await release()
            await asyncio.wait({heartbeat})

    async def _failed(self, session: AgentSession, reason: CheckpointReason, message: str) -> None:
        _log.warning(
            "automatic %s introspection of session %s failed: %s", reason, session.id, message
        )
        try:
            session.scope.emit(SessionCheckpointFailed(reason=reason, message=message))
            await session.scope.flush_events()
        except Exception:
            _log.warning(
                "could not record the failed pass of session %s", session.id, exc_info=True
            )

    # -- helpers ----------------------------------------------------------------------------

    async def _stop(self, session_id: str) -> None:
        self._cancel_idle(session_id)
        for job in [job for job in self._queue if job[0] == session_id]:
            del self._queue[job]
            self._finished(job)
        current = self._current
        if current is not None and current[0] == session_id:
            current[1].cancel()
            await asyncio.wait({current[1]})

    def _may_be_due(self, session: AgentSession, settings: EffectiveIntrospection) -> bool:
        count = session.record.turn_count
        if count >= session.policy.max_turns:
            return True
        every = settings.every_turns
        if every <= 0:
            return False
        seen = self._turns_seen.get(session.id)
        if seen is None:
            return count >= every
        then, since = seen
        return since + (count - then) >= every

    def _cancel_idle(self, session_id: str) -> None:
        timer = self._idle.pop(session_id, None)
        if timer is not None:
            timer.cancel()

    def _busy(self, session: AgentSession) -> bool:
        return session.busy or bool(self._turns.get(session.id))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None] | None:
        if self._closed:
            work.close()
            return None
        task = asyncio.create_task(self._quietly(work))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def _quietly(self, work: Awaitable[None]) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except StoreError as error:  # a damaged file, a full disk: explained, no traceback
            _log.warning("introspection trigger skipped: %s", error.message)
        except Exception:
            # Deciding whether to checkpoint must never disturb the session it watches.
            _log.warning("introspection trigger failed", exc_info=True)

    async def _settings(self, working_dir: str) -> EffectiveIntrospection | None:
        try:
            return (await self._live.workspace_config(working_dir)).introspection
        except RelaviumError as error:
            _log.warning("no automatic introspection: %s", error.message)
            return None

    async def _config(self, session: AgentSession) -> WorkspaceConfig | None:
        try:
            return await self._live.workspace_config(session.record.context.working_dir)
        except RelaviumError as error:
            _log.warning("no automatic introspection: %s", error.message)
            return None

    async def _pending(self, session_id: str) -> PendingWork:
        return await self._store.run(lambda s: pending_work(s.connection, session_id))


async def _passes_done(scan: asyncio.Task[None], waits: list[asyncio.Future[None]]) -> None:
    """Until a new session's scan is done and every pass it queued has finished."""
    await asyncio.wait({scan})
    for done in list(waits):
        await asyncio.shield(done)  # giving up waiting must not cancel the job itself


def _canceller(task: asyncio.Task[Any] | None) -> Callable[[str], None]:
    """The heartbeat's ``stop``: another window asked for an abort, or took the lease."""

    def stop(_why: str) -> None:
        if task is not None:
            task.cancel()

    return stop
