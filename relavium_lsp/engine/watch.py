"""Seeing what other processes commit to the shared history (``docs/design.md`` §3.1).

Every editor window's server writes the same database; there is no second transport between
them. One task per engine polls two cheap marks on the store's worker thread (so the event
loop never touches the disk): ``PRAGMA data_version``, which moves when another connection
commits, and the newest row of the ``session_changes`` log, which triggers append to on
every list-visible change (ours included). When a mark moves it

- asks which watched sessions (the ones this process serves) have events past what was
  delivered here, and has the bus deliver them from the durable log — same sequence numbers,
  same order as in the owning window; token deltas may arrive coalesced into fewer events;
- asks which sessions whose events this process numbers (it holds their lease) have rows in
  their event inbox, and has the bus number and deliver them;
- reads the change log past the newest change seen and hands the changes to the list
  listeners (the LSP server turns them into ``relavium/sessionsChanged``).

It runs only while something listens, and costs one tiny query per interval when nothing
changes (``RELAVIUM_WATCH_INTERVAL_S``, default 0.1 s), run by the store's worker thread
itself: the event loop is woken only when a mark moved (``store/store_thread.py``).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable

from relavium_lsp.contracts.wire import SessionListChange
from relavium_lsp.engine.bus import EventBus, Unsubscribe
from relavium_lsp.store.async_store import AsyncSessionStore

DEFAULT_INTERVAL_S = 0.1
CHANGES_PAGE = 500
ListListener = Callable[[list[SessionListChange]], None]
_log = logging.getLogger(__name__)


def interval_from_env() -> float:
    """The polling interval: ``RELAVIUM_WATCH_INTERVAL_S`` or the default."""
    try:
        value = float(os.environ.get("RELAVIUM_WATCH_INTERVAL_S") or DEFAULT_INTERVAL_S)
    except ValueError:
        return DEFAULT_INTERVAL_S
    return value if value > 0 else DEFAULT_INTERVAL_S


class SharedLogWatcher:
    """Polls the shared database for other processes' commits; see the module doc."""

    def __init__(self, store: AsyncSessionStore, bus: EventBus, interval_s: float) -> None:
        self._store = store
        self._bus = bus
        self._interval_s = interval_s
        self._list_listeners: list[ListListener] = []
        self._commit_hooks: list[Callable[[], Awaitable[None]]] = []
        self._task: asyncio.Task[None] | None = None
        self._wanted = False

    def start(self) -> None:
        """Start polling (idempotent); something listens now."""
        self._wanted = True
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())

    def on_list_change(self, listener: ListListener) -> Unsubscribe:
        """Call ``listener`` with each batch of session-list changes; returns an unsubscribe."""
        self._list_listeners.append(listener)
        self.start()

        def unsubscribe() -> None:
            if listener in self._list_listeners:
                self._list_listeners.remove(listener)

        return unsubscribe

    def on_other_commits(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Await ``hook`` whenever another process has committed (workspace memory, §2.6)."""
        self._commit_hooks.append(hook)

    async def close(self) -> None:
        """Stop polling."""
        self._wanted = False
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        version, seen = await self._store.run(lambda s: s.change_marks())
        await self._store.run(lambda s: s.prune_session_changes())
        moved = asyncio.Event()
        # The store's worker looks at the marks every interval; this task wakes only when
        # they moved (an idle server's CPU: one thread wake-up per look, issue 25).
        stop = self._store.watch(
            self._interval_s, lambda s: s.change_marks(), (version, seen), moved.set
        )
        try:
            while self._wanted:
                await moved.wait()
                moved.clear()
                try:
                    marks = await self._store.run(lambda s: s.change_marks())
                    others_committed = marks[0] != version
                    if others_committed:
                        version = marks[0]
                        await self._catch_up_sessions()
                        for hook in list(self._commit_hooks):
                            await hook()
                    if marks[1] != seen:
                        # Our own commits move only the change log, yet a stale-lease takeover
                        # here folds other processes' inbox events into the log: read back too.
                        seen = await self._announce_changes(seen, catch_up=not others_committed)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    # A closed or briefly locked store: look again after an interval.
                    _log.debug("watching the shared history failed once", exc_info=True)
                    await asyncio.sleep(self._interval_s)  # a retry period, not a sync point
                    moved.set()
        finally:
            stop()

    async def _catch_up_sessions(self) -> None:
        watched = self._bus.watched()
        owned = self._bus.owned_inboxes()
        if not watched and not owned:
            return
        newest, inboxes = await self._store.run(
            lambda s: (s.newest_event_sequences(watched), s.newest_inbox_ids(list(owned)))
        )
        for session_id, inbox_id in inboxes.items():
            # A session numbered here: what other processes appended waits in its inbox.
            if inbox_id > owned[session_id]:
                await self._bus.take_inbox(session_id)
        for session_id, sequence in newest.items():
            if sequence > self._bus.delivered_through(session_id):
                await self._bus.catch_up(session_id)

    async def _announce_changes(self, seen: int, *, catch_up: bool = False) -> int:
        while True:
            after = seen
            watched = self._bus.watched() if catch_up else []
            rows, newest = await self._store.run(
                lambda s, after=after, watched=watched: (  # type: ignore[misc]
                    s.session_changes_after(after, CHANGES_PAGE),
                    s.newest_event_sequences(watched) if watched else {},
                )
            )
            catch_up = False  # one look per poll; read on the same trip as the changes
            for session_id, sequence in newest.items():
                if sequence > self._bus.delivered_through(session_id):
                    await self._bus.catch_up(session_id)
            if not rows:
                return seen
            seen = rows[-1][0]
            changes: list[SessionListChange] = []
            for _seq, session_id, kind in rows:
                change = SessionListChange(session_id=session_id, kind=kind)
                if change not in changes:
                    changes.append(change)
            for listener in list(self._list_listeners):
                try:
                    listener(changes)
                except Exception:
                    _log.exception("a session-list listener failed")
            if len(rows) < CHANGES_PAGE:
                return seen
