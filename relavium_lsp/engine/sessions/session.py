"""A live session: the session lifecycle (``docs/design.md`` §2) around the turn core.

One :class:`AgentSession` exists per session a process is serving. It owns the running turn
as an ``asyncio`` task so that ``abort`` (or a cancelled request) can stop it from outside,
hands every part of a turn its :class:`~relavium_lsp.engine.scope.SessionScope`, and is the
one place that decides what a settled turn does to the transcript:

- completed → kept; ``turn_completed`` with the model's stop reason;
- failed or aborted before it changed a file → everything from the turn's user message on is
  rolled out of the visible transcript (rows stay, flagged), ``turn_completed`` carries the
  typed error or ``aborted``; spend is kept either way;
- failed or aborted after a tool began changing a file → the turn is kept, closed by an
  interruption marker (reason ``error`` or ``aborted``), so the transcript, the turn's file
  checkpoints (a rewind undoes them) and the files agree; ``turn_completed`` says ``kept``.

Its state (row, agent, policy, chain, scope) is built in ``engine/sessions/state.py`` and the
turn's lease and heartbeat (§7.1) are handled in ``engine/sessions/lease.py``; this module runs
and settles turns.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Literal

from relavium_lsp.contracts.content import ContentPart, DurableContentPart, TextPart, de_inline
from relavium_lsp.contracts.events import (
    CompactionReason,
    SessionCancelled,
    SessionCompacted,
    SessionTrimmed,
    TokenUsage,
    TurnCompleted,
    TurnError,
    TurnResult,
    TurnStarted,
)
from relavium_lsp.contracts.session import (
    AgentSessionRecord,
    InterruptionMarker,
    SessionMessage,
    SessionStatus,
)
from relavium_lsp.engine.events.bus import LogState
from relavium_lsp.engine.memory.workspace import prompt_memory
from relavium_lsp.engine.sessions.lease import SessionLease
from relavium_lsp.engine.turn.compaction import CompactionMode
from relavium_lsp.engine.turn.planning import history_ceiling, plan_turn, walk_for_turn
from relavium_lsp.engine.turn.runner import TurnPlan, TurnRunner
from relavium_lsp.engine.waiting import finish_before_cancelling
from relavium_lsp.errors import (
    InvalidInput,
    LeaseLost,
    SessionBusy,
    SessionEnded,
    SessionNotFound,
    SessionRunningElsewhere,
    StoreError,
)
from relavium_lsp.store.rows.event_reads import latest_checkpoint
from relavium_lsp.store.rows.learned_window import save_learned_window
from relavium_lsp.store.rows.leases import LeaseClock
from relavium_lsp.store.rows.tail_walk import TailWalk
from relavium_lsp.store.sessions import SessionStore
from relavium_lsp.tools.base import ChangeJournal, release_session_tools

_log = logging.getLogger(__name__)
# How long a session stays idle after a turn before its write-ahead log is checkpointed.
CHECKPOINT_IDLE_S = 1.0
# The note closing a failed or aborted turn that is kept because it changed files (§2.2).
KEPT_TURN_NOTES = {
    "error": (
        "[This turn failed after it had changed files; its messages are kept so the "
        "transcript matches the workspace. Rewind the turn to undo its changes.]"
    ),
    "aborted": (
        "[This turn was aborted after it had changed files; its messages are kept so the "
        "transcript matches the workspace. Rewind the turn to undo its changes.]"
    ),
}


def _spent(runner: TurnRunner | None) -> TokenUsage:
    return runner.usage if runner is not None else TokenUsage()


class AgentSession(SessionLease):
    """One session being served by this process."""

    async def send_message(
        self, text: str, attachments: Sequence[ContentPart] = (), *, author: str | None = None
    ) -> TurnResult:
        """Append the user's message and run one turn; returns when the turn settles.

        ``author`` names the agent that wrote the message when it is not the user (a
        delegated task carries the delegating agent, §2.5).
        """
        if self.record.status == "ended":
            raise SessionEnded(f"session {self.id} was cancelled; resume it to continue")
        if self.busy:
            raise SessionBusy(f"session {self.id} is already running a turn")
        if not text.strip() and not attachments:
            raise InvalidInput("the message is empty")
        parts: list[ContentPart] = [TextPart(text=text), *attachments]
        try:
            durable = de_inline(parts, self.scope.media)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from exc
        # Whether another window runs a turn here is asked in the turn's first store trip.
        watch = self.turn_watch
        if watch is not None:
            await watch.turn_begins(self.id)  # e.g. an automatic introspection pass stops
        self._cancel_pending_checkpoint()
        task = asyncio.create_task(self._run_turn(durable, author))
        self._turn = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.cancelled():
                # Our caller went away (e.g. $/cancelRequest): the turn stops with it.
                await self.abort()
                raise
            # Aborted before the turn could start: settle it here instead.
            return await self._settle(TurnResult(stop_reason="aborted", tokens_used=TokenUsage()))
        finally:
            if watch is not None:
                watch.turn_settled(self.id)

    async def abort(self) -> bool:
        """Stop the running turn (if any) and wait until it has settled."""
        task = self._turn
        if task is None or task.done():
            return False
        task.cancel()
        await asyncio.wait({task})
        return True

    async def cancel(self) -> None:
        """End the session (terminal event); it can still be resumed later by id."""
        await self.abort()
        await release_session_tools(self.scope.tools, self.id)  # its background terminals
        await self.set_status("ended")
        self.scope.emit(SessionCancelled())
        await self.scope.flush_events()

    async def compact(
        self, *, mode: CompactionMode, reason: CompactionReason = "manual"
    ) -> SessionCompacted | SessionTrimmed:
        """Compact the visible history now (holding the session's lease meanwhile)."""
        if self.busy:
            raise SessionBusy(f"session {self.id} is running a turn; compact it afterwards")
        leases = self.scope.leases
        token = None
        if leases is not None:
            token = leases.new_token()
            clock = leases.clock()
            try:
                await self.scope.hold_lease(token, clock)
            except BaseException:
                leases.drop_token(token)
                raise
        try:
            event = await self._compactor.compact(
                reason=reason,
                mode=mode,
                chain=self.chain,
                context_window=self.context_window(),
                keep_messages=self.policy.max_messages // 2 if self.policy.max_messages else None,
            )
        finally:
            if leases is not None and token is not None:
                await self.scope.give_back_lease(token)
                leases.drop_token(token)
        self.last_input_tokens = None
        await self.scope.flush_events()
        return event

    async def _run_turn(
        self, user_parts: list[DurableContentPart], author: str | None = None
    ) -> TurnResult:
        self._lease_lost = False
        store = self.scope.store
        user: SessionMessage | None = None
        plan: TurnPlan | None = None
        runner: TurnRunner | None = None
        synced: asyncio.Future[None] | None = None
        trips: list[asyncio.Future[_Begun | _Declined | _CompactFirst]] = []
        self._in_turn_body = True
        try:
            # One trip to the store's thread for the refusal, the reads the turn's checks
            # need, the user message's commit and the history tail: every trip is two thread
            # hand-offs, and waking a thread is most of a turn's overhead on a busy machine
            # (issue 25). The trip stops before the commit when a check says no (the turn
            # limit) or when history must be compacted first (then a second trip commits).
            # An abort landing while it runs still lets it finish; the handler below then
            # rolls back the message it committed (``trips``).
            trips.append(
                asyncio.ensure_future(store.run(await self._start_trip(user_parts, author)))
            )
            start = await finish_before_cancelling(trips[-1])
            if isinstance(start, _CompactFirst):
                self.record = start.record.model_copy(update={"model_id": self.record.model_id})
                await self._auto_compact(start.since_boundary)
                trip = await self._start_trip(user_parts, author, checked=True)
                trips.append(asyncio.ensure_future(store.run(trip)))
                start = await finish_before_cancelling(trips[-1])
            self.record = start.record.model_copy(update={"model_id": self.record.model_id})
            if isinstance(start, _Declined):
                raise _AtTurnLimit(start.newest)
            assert isinstance(start, _Begun)  # a checked trip never stops before its commit
            started, turn_count, walk = start.user, start.turn_count, start.walk
            if start.lease is not None:
                self.scope.own_events(start.lease[0], start.log_state)
            self._start_heartbeat()
            user = started
            self.turn_user_sequence = started.sequence_number
            synced = asyncio.ensure_future(store.sync_log())
            self.record = self.record.model_copy(
                update={"turn_count": turn_count, "status": "streaming"}
            )
            self.scope.emit(TurnStarted(user_message_sequence=started.sequence_number))
            if self.working_memory is None:
                latest = await store.run(lambda s: latest_checkpoint(s.connection, self.id))
                self.working_memory = latest.working_memory if latest is not None else ""
            if self.workspace_memory is None:
                self.workspace_memory = await prompt_memory(self.scope.memory, self.record)
            plan = await plan_turn(
                self.scope, self.snapshot(), user_sequence=started.sequence_number, walk=walk
            )
            runner = TurnRunner(plan, self.scope, self.governor)
            result = await runner.run()
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            user = user or _committed_user(trips)
            result = TurnResult(stop_reason="aborted", tokens_used=_spent(runner))
        except _AtTurnLimit as limit:
            # Nothing was appended: the transcript still ends where it ended.
            self._forget_unused_lease()
            result = _turn_limit(self.policy.max_turns, limit.newest)
        except LeaseLost:
            # Another process took the turn over while this one was stalled; it marked the
            # turn interrupted and owns the session now: settle without touching history.
            self._lease_lost = True
            result = TurnResult(stop_reason="aborted", tokens_used=_spent(runner))
        except (SessionRunningElsewhere, SessionNotFound):
            # Refused before the turn began (another window holds the lease, or the session
            # is gone): the request's error, with nothing to settle.
            self._in_turn_body = False
            await self._end_lease()
            raise
        except StoreError as error:  # a full disk, a damaged file: the message says which
            _log.warning("turn failed in session %s: %s", self.id, error.message)
            result = TurnResult(
                stop_reason="error",
                tokens_used=_spent(runner),
                error=TurnError(code="internal", message=error.message),
            )
        except Exception:
            _log.exception("turn failed in session %s", self.id)
            result = TurnResult(
                stop_reason="error",
                tokens_used=_spent(runner),
                error=TurnError(
                    code="internal", message="An internal error ended the turn (see the log)."
                ),
            )
        self._in_turn_body = False
        journal = plan.tool_context.journal if plan is not None else None
        if result.stop_reason in ("error", "aborted") and user is not None and not self._lease_lost:
            if journal is not None and journal.changed_files:
                result = await self._keep_interrupted_turn(result, journal)
            else:
                result = await self._roll_back(result, user.sequence_number)
        if runner is not None:
            self.last_input_tokens = runner.last_input_tokens or self.last_input_tokens
            learnt = runner.window.context_window
            if learnt is not None and learnt != self.context_window():
                # A provider refused a request as too large: later turns plan for its window,
                # here and after a restart.
                self.learned_context_window = learnt
                await self._keep_learned_window(learnt)
        if synced is not None:
            await _wait_for_disk(synced)
        return await self._settle(result)

    async def _keep_learned_window(self, tokens: int) -> None:
        """Store the window learnt for the session's first model (kept across restarts)."""
        if self._lease_lost:
            return  # another process owns the session's row now
        model = self.chain[0].model
        try:
            await self.scope.store.run(
                lambda s: save_learned_window(s.connection, self.id, model, tokens)
            )
        except StoreError as error:  # only an optimisation: the next refusal teaches it again
            _log.warning("could not keep the learnt context window: %s", error.message)

    async def _roll_back(self, result: TurnResult, from_sequence: int) -> TurnResult:
        """Hide a failed or aborted turn that changed no file, from its user message on."""
        store = self.scope.store
        try:
            await store.run(lambda s: s.roll_back_from(self.id, from_sequence))
        except StoreError as error:  # the disk may still be full: the user message stays
            _log.warning("could not roll back the failed turn: %s", error.message)
        last = await store.run(lambda s: s.last_message(self.id))
        return dataclasses.replace(result, last_sequence=last.sequence_number if last else 0)

    async def _keep_interrupted_turn(
        self, result: TurnResult, journal: ChangeJournal
    ) -> TurnResult:
        """Close a failed or aborted turn that changed files with an interruption marker.

        Its checkpoints are written first (a file tool may have queued its last note), so a
        rewind finds every file the turn changed.
        """
        reason: Literal["error", "aborted"] = (
            "aborted" if result.stop_reason == "aborted" else "error"
        )
        note = [TextPart(text=KEPT_TURN_NOTES[reason])]
        try:
            await journal.commit()

            def close(s: SessionStore) -> SessionMessage:
                last = s.last_message(self.id)
                marker = InterruptionMarker(
                    interrupted_after_sequence=last.sequence_number if last else 0, reason=reason
                )
                return s.append_message(self.id, "system", note, interruption=marker)

            closed = await finish_before_cancelling(self.scope.store.run(close))
        except StoreError as error:  # the disk may be full: the turn's rows stay as they are
            _log.warning("could not close the interrupted turn: %s", error.message)
            return dataclasses.replace(result, kept=True)
        return dataclasses.replace(result, kept=True, last_sequence=closed.sequence_number)

    async def _start_trip(
        self, user_parts: list[DurableContentPart], author: str | None, *, checked: bool = False
    ) -> Callable[[SessionStore], _Begun | _Declined | _CompactFirst]:
        """The turn's first store trip, built on the loop (``checked``: after compacting).

        In order: another window's turn refuses it (:class:`SessionRunningElsewhere`); the
        session's row; the turn limit (:class:`_Declined`, nothing written); compaction due
        (:class:`_CompactFirst`, nothing written); else the user message's commit — which
        does not wait for its fsync: that runs while the model request is already on its
        way, and the turn does not settle before it is done (one fsync was most of the
        per-turn overhead). A killed process keeps the message either way (it is in the
        write-ahead log); only an OS crash in those few milliseconds could lose it — the
        message in flight, never an earlier one. The turn's lease is taken in the same
        commit (docs/design.md §7.1), and the event log read right after it: the turn
        numbers its events from there (delivered at once, written behind, §3.1). The
        history tail is read last, for the largest budget the turn can have
        (store/rows/tail_walk.py).
        """
        lease = await self._take_lease()
        after = self.scope.numbering_position()
        ceiling = history_ceiling(self.snapshot())
        max_turns = self.policy.max_turns

        def trip(s: SessionStore) -> _Begun | _Declined | _CompactFirst:
            if lease is not None and not checked:
                s.refuse_if_leased(self.id, lease[1], "send to")
            record = s.get_session(self.id)
            if record is None:
                raise SessionNotFound(f"no session with id {self.id!r}")
            if not checked:
                if record.turn_count >= max_turns:
                    return _Declined(record, s.last_message(self.id))
                since_boundary = s.count_tokens_since_boundary(self.id)
                if self._compaction_due(since_boundary) is not None or (
                    # A view a turn compacted into (§2.3) that the tail can no longer hold
                    # is compacted again rather than cut out of the model's view.
                    self.policy.auto_compact
                    and since_boundary[1] > ceiling
                    and s.newest_marker_holds_view(self.id)
                ):
                    return _CompactFirst(record, since_boundary)
            user, turn_count = s.begin_turn(
                self.id, user_parts, wait_for_disk=False, lease=lease, author=author
            )
            log_state = s.event_log_state(self.id, after, 0, lease[0] if lease else None)
            return _Begun(
                record, user, turn_count, log_state, walk_for_turn(s, self.id, ceiling), lease
            )

        return trip

    async def _settle(self, result: TurnResult) -> TurnResult:
        self.turn_user_sequence = None
        self.record = self.record.model_copy(update={"totals": self.governor.totals})
        await self._end_lease(status_after(result))
        self.scope.emit(
            TurnCompleted(
                stop_reason=result.stop_reason,
                tokens_used=result.tokens_used,
                error=result.error,
                kept=result.kept or None,
            )
        )
        await self.scope.flush_events()
        # Between turns is the cheap moment to fold the write-ahead log into the database: in
        # the background, so the settled turn is answered without waiting for its fsyncs, and
        # only once the session has stayed idle for CHECKPOINT_IDLE_S. A checkpoint holds the
        # store's one worker thread; a follow-up sent at once would otherwise queue its first
        # reads and its user-message commit behind it (issue 25: most of the per-turn p99).
        self._cancel_pending_checkpoint()
        self._checkpoint_timer = asyncio.get_running_loop().call_later(
            CHECKPOINT_IDLE_S, self._start_checkpoint
        )
        return result

    def _cancel_pending_checkpoint(self) -> None:
        if self._checkpoint_timer is not None:
            self._checkpoint_timer.cancel()
            self._checkpoint_timer = None

    def _start_checkpoint(self) -> None:
        self._checkpoint_timer = None
        if not self.busy:
            self._checkpoint = asyncio.ensure_future(self._fold_write_ahead_log())

    async def _fold_write_ahead_log(self) -> None:
        try:
            await self.scope.store.run(lambda s: s.checkpoint())
        except Exception:
            # Not a correctness matter: SQLite's own auto-checkpoint remains the safety net.
            _log.debug("checkpoint after a turn of %s failed", self.id, exc_info=True)

    async def _auto_compact(self, since_boundary: tuple[int, int]) -> None:
        """Compact first when the history since the last boundary is past a limit.

        ``since_boundary`` is (visible messages, estimated tokens) after the newest
        compaction marker, read with the session's row at the start of the turn.
        """
        reason = self._compaction_due(since_boundary) or "threshold"
        policy = self.policy
        await self._hold_lease_early()
        await self._compactor.compact(
            reason=reason,
            mode="trim" if reason == "max_messages" and not policy.auto_compact else "summarize",
            chain=self.chain,
            context_window=self.context_window(),
            keep_messages=policy.max_messages // 2 if policy.max_messages else None,
        )
        self.last_input_tokens = None

    def _compaction_due(self, since_boundary: tuple[int, int]) -> CompactionReason | None:
        """Why history must be compacted before this turn, if it must (reads no store)."""
        policy = self.policy
        messages, tokens = since_boundary
        used = self.last_input_tokens if self.last_input_tokens is not None else tokens
        if policy.max_messages is not None and messages > policy.max_messages:
            return "max_messages"
        if policy.auto_compact and used > policy.compact_threshold * self.context_window():
            return "threshold"
        return None


@dataclasses.dataclass(frozen=True)
class _Begun:
    """The turn's first store trip committed its user message."""

    record: AgentSessionRecord
    user: SessionMessage
    turn_count: int
    log_state: LogState
    walk: TailWalk | None
    lease: tuple[str, LeaseClock] | None


class _AtTurnLimit(Exception):
    """The turn is refused by the session's turn limit (raised before anything is written)."""

    def __init__(self, newest: SessionMessage | None) -> None:
        super().__init__("turn limit")
        self.newest = newest


@dataclasses.dataclass(frozen=True)
class _Declined:
    """The session is at its turn limit: nothing was written."""

    record: AgentSessionRecord
    newest: SessionMessage | None


@dataclasses.dataclass(frozen=True)
class _CompactFirst:
    """History must be compacted before the user message is appended: nothing was written."""

    record: AgentSessionRecord
    since_boundary: tuple[int, int]


def _committed_user(
    trips: Sequence[asyncio.Future[_Begun | _Declined | _CompactFirst]],
) -> SessionMessage | None:
    """The user message a finished start trip committed (an abort landed as it finished)."""
    for trip in trips:
        if trip.done() and not trip.cancelled() and trip.exception() is None:
            start = trip.result()
            if isinstance(start, _Begun):
                return start.user
    return None


def _turn_limit(max_turns: int, newest: SessionMessage | None) -> TurnResult:
    return TurnResult(
        stop_reason="error",
        tokens_used=TokenUsage(),
        last_sequence=newest.sequence_number if newest else 0,
        error=TurnError(
            code="turn_limit",
            message=(
                f"This session reached its limit of {max_turns} turns; "
                "start a new session to continue."
            ),
        ),
    )


# Errors that are a policy saying no before anything ran, not a failure of the work.
_REFUSALS = frozenset({"turn_limit", "budget_exceeded"})


def status_after(result: TurnResult) -> SessionStatus:
    """The status a settled turn leaves: ``failed`` after a provider or tool failure.

    An abort, a refusal (turn or cost limit) and a completed turn leave the session ``idle``;
    a crash is recovered to ``idle`` with an interruption marker when the session is loaded.
    ``failed`` is not terminal: the next message runs a turn as usual.
    """
    if result.stop_reason == "error" and (
        result.error is None or result.error.code not in _REFUSALS
    ):
        return "failed"
    return "idle"


async def _wait_for_disk(synced: asyncio.Future[None]) -> None:
    """Let the user message's fsync finish before the turn settles (never fails the turn).

    An abort arriving meanwhile does not stop the turn from settling: its result is decided.
    """
    try:
        await asyncio.shield(synced)
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
    except Exception:
        # The message is committed; the turn's next durable commit syncs the log as well.
        _log.warning("could not sync the history database's log", exc_info=True)
