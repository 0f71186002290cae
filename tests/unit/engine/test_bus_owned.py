"""The bus numbering a session it holds the lease of: delivered first, written behind (§3.1).

A real encrypted store on its worker thread; a second ``SessionStore`` connection stands for
another server process on the same database.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from relavium_lsp.contracts.events import (
    AgentToken,
    SessionExported,
    StampedEvent,
    TurnStarted,
)
from relavium_lsp.engine.events import channel as bus_channel
from relavium_lsp.engine.events.bus import EventBus
from relavium_lsp.errors import StoreError
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.rows import event_log
from relavium_lsp.store.rows.leases import LeaseClock
from relavium_lsp.store.sessions import SessionStore
from tests.unit.engine.engine_harness import DEADLINE_S, until
from tests.unit.store.store_records import make_record


def _clock(*tokens: str, pid: int = 100) -> LeaseClock:
    return LeaseClock(
        now=1000.0,
        timeout_s=3600.0,
        own_tokens=frozenset(tokens),
        host="this-host",
        pid=pid,
        is_alive=lambda _pid: True,
    )


@dataclass
class Setup:
    store: AsyncSessionStore
    other: SessionStore  # another process's connection
    bus: EventBus
    session_id: str
    seen: list[StampedEvent]

    def log(self) -> list[StampedEvent]:
        return self.other.events_after(self.session_id, 0, 100_000)

    async def hold_lease(self, token: str) -> None:
        clock = _clock(token)
        await self.store.run(lambda s: s.acquire_lease(self.session_id, token, clock))
        self.bus.claim(self.session_id, token)


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    path = tmp_path / "history.db"
    key = DbKey(os.urandom(32), "env")
    store = await AsyncSessionStore.open(path, key)
    record = make_record()
    await store.run(lambda s: s.create_session(record))
    other = await asyncio.to_thread(SessionStore.open, path, key)
    bus = EventBus(store, lease_clock=lambda: _clock())
    seen: list[StampedEvent] = []
    bus.subscribe(seen.append)
    try:
        yield Setup(store, other, bus, record.id, seen)
    finally:
        await bus.drain_all()
        other.close()
        await store.close()


def _token(text: str) -> AgentToken:
    return AgentToken(token=text, model="m")


def _wire(events: list[StampedEvent]) -> list[tuple[int, str, str]]:
    return [(e.sequence_number, e.timestamp, e.payload.model_dump_json()) for e in events]


async def _until_numbering(setup: Setup) -> None:
    """Wait until the bus has read the log's newest number (its pump does, after a claim)."""
    await until(lambda: setup.session_id in setup.bus.owned_inboxes(), "numbering to start")


async def test_owned_numbers_are_the_numbers_the_log_then_holds(setup: Setup) -> None:
    setup.bus.emit(setup.session_id, TurnStarted(user_message_sequence=1))
    await setup.bus.drain(setup.session_id)
    await setup.hold_lease("a")
    await _until_numbering(setup)
    for batch in range(20):
        for n in range(25):
            setup.bus.emit(setup.session_id, _token(f"{batch}.{n} "))
        await asyncio.sleep(0)  # let the write-behind pump take a batch now and then
    await setup.bus.disown(setup.session_id)
    log = setup.log()
    assert [e.sequence_number for e in log] == list(range(1, len(log) + 1))  # gapless
    assert len(log) > 20  # at least one event per turn of the loop (a burst coalesces)
    assert _wire(setup.seen) == _wire(log)
    text = "".join(getattr(e.payload, "token", "") for e in log)
    assert text == "".join(f"{b}.{n} " for b in range(20) for n in range(25))


async def test_a_token_is_delivered_while_its_write_is_still_blocked(setup: Setup) -> None:
    await setup.hold_lease("a")
    await _until_numbering(setup)
    gate = threading.Event()
    blocked = setup.store.submit(lambda _s: gate.wait(DEADLINE_S))  # the worker thread waits
    try:
        setup.bus.emit(setup.session_id, _token("fast"))
        # Delivered with its number while nothing could be written.
        await until(lambda: bool(setup.seen), "the token's delivery")
        assert [(e.sequence_number, e.type) for e in setup.seen] == [(1, "agent:token")]
        assert setup.log() == []
    finally:
        gate.set()
    assert await blocked
    await setup.bus.disown(setup.session_id)
    assert _wire(setup.log()) == _wire(setup.seen)


async def test_disown_returns_once_everything_numbered_is_written(setup: Setup) -> None:
    await setup.hold_lease("a")
    await _until_numbering(setup)
    gate = threading.Event()
    setup.store.submit(lambda _s: gate.wait(DEADLINE_S))
    for n in range(5):
        setup.bus.emit(setup.session_id, _token(str(n)))
        setup.bus.emit(setup.session_id, TurnStarted(user_message_sequence=n + 1))
    disowning = asyncio.ensure_future(setup.bus.disown(setup.session_id))
    await until(lambda: len(setup.seen) == 10, "delivery before the writes")
    assert not disowning.done()  # its writes are still queued behind the gate
    gate.set()
    await disowning
    assert [e.sequence_number for e in setup.log()] == list(range(1, 11))
    # From now on the database numbers again (and the events are delivered after commit).
    setup.bus.emit(setup.session_id, _token("after"))
    await setup.bus.drain(setup.session_id)
    assert [e.sequence_number for e in setup.seen] == list(range(1, 12))
    assert _wire(setup.log()) == _wire(setup.seen)


async def test_other_processes_events_go_to_the_inbox_and_the_owner_numbers_them(
    setup: Setup,
) -> None:
    await setup.hold_lease("a")
    await _until_numbering(setup)
    setup.bus.emit(setup.session_id, _token("mine "))
    exported = SessionExported(workflow_path="elsewhere.jsonl", format="jsonl")
    assert setup.other.append_events(setup.session_id, [exported]) == []
    setup.bus.emit(setup.session_id, _token("more"))
    assert await setup.bus.take_inbox(setup.session_id) == 1
    assert await setup.bus.take_inbox(setup.session_id) == 0  # taken once
    # The two deltas of one turn of the loop went out as one event; B's event after them.
    assert [e.type for e in setup.seen] == ["agent:token", "session:exported"]
    assert getattr(setup.seen[0].payload, "token", None) == "mine more"
    await setup.bus.drain(setup.session_id)
    assert setup.other.read_event_inbox(setup.session_id, 0) == []
    assert _wire(setup.log()) == _wire(setup.seen)


async def test_a_claim_delivers_what_others_wrote_first_and_folds_the_inbox(
    setup: Setup,
) -> None:
    await setup.bus.watch(setup.session_id)
    setup.other.append_events(setup.session_id, [_token("theirs")])
    # Another process held the lease a moment ago and left an inbox row behind.
    other_clock = _clock("b", pid=200)
    setup.other.acquire_lease(setup.session_id, "b", other_clock)
    await setup.store.run(
        lambda s: s.append_events(setup.session_id, [SessionExported(workflow_path="x")])
    )
    setup.other.release_lease(setup.session_id, "b")
    await setup.hold_lease("a")
    setup.bus.emit(setup.session_id, _token("mine"))  # before numbering: the log numbers it
    await _until_numbering(setup)
    setup.bus.emit(setup.session_id, _token("numbered here"))
    await setup.bus.disown(setup.session_id)
    await setup.bus.drain(setup.session_id)
    log = setup.log()
    assert [e.sequence_number for e in log] == [1, 2, 3, 4]
    assert [getattr(e.payload, "token", e.type) for e in setup.seen] == [
        "theirs",
        "session:exported",
        "mine",
        "numbered here",
    ]
    assert _wire(setup.seen) == _wire(log)


async def test_a_lost_lease_stops_the_numbering_and_loses_nothing(setup: Setup) -> None:
    await setup.hold_lease("a")
    await _until_numbering(setup)
    setup.bus.emit(setup.session_id, _token("one"))
    await setup.bus.drain(setup.session_id)
    # Taken over (the owner looked stale), and the lease released again by the taker.
    stale = LeaseClock(now=10_000.0, timeout_s=1.0, host="this-host", pid=200)
    setup.other.refuse_if_leased(setup.session_id, stale, "test")
    setup.bus.emit(setup.session_id, _token("two"))
    await setup.bus.drain(setup.session_id)
    assert setup.session_id not in setup.bus.owned_inboxes()
    setup.bus.emit(setup.session_id, _token("three"))
    await setup.bus.drain(setup.session_id)
    assert [getattr(e.payload, "token", None) for e in setup.log()] == ["one", "two", "three"]


async def test_inbox_rows_left_before_a_claim_are_numbered_by_the_claim(setup: Setup) -> None:
    await setup.bus.watch(setup.session_id)
    setup.other.append_events(setup.session_id, [_token("theirs")])
    setup.other.acquire_lease(setup.session_id, "b", _clock("b", pid=200))
    await setup.store.run(
        lambda s: s.append_events(setup.session_id, [SessionExported(workflow_path="x")])
    )
    setup.other.release_lease(setup.session_id, "b")  # and it died before folding
    await setup.hold_lease("a")
    await _until_numbering(setup)
    setup.bus.emit(setup.session_id, _token("numbered here"))
    await setup.bus.disown(setup.session_id)
    assert [getattr(e.payload, "token", e.type) for e in setup.seen] == [
        "theirs",
        "session:exported",
        "numbered here",
    ]
    assert _wire(setup.seen) == _wire(setup.log())
    assert setup.other.read_event_inbox(setup.session_id, 0) == []


async def test_a_claim_with_the_log_read_after_the_lease_numbers_at_once(setup: Setup) -> None:
    await setup.bus.watch(setup.session_id)
    setup.other.append_events(setup.session_id, [_token("theirs")])
    after = setup.bus.claim_position(setup.session_id)
    clock = _clock("a")

    def take(store: SessionStore) -> tuple[int, int, list[StampedEvent], list[Any]]:
        store.acquire_lease(setup.session_id, "a", clock)
        return store.event_log_state(setup.session_id, after, 0, "a")

    state = await setup.store.run(take)
    setup.bus.claim(setup.session_id, "a", state)
    assert setup.session_id in setup.bus.owned_inboxes()  # no trip to the store first
    assert [getattr(e.payload, "token", None) for e in setup.seen] == ["theirs"]
    setup.bus.emit(setup.session_id, _token("mine"))
    await setup.bus.disown(setup.session_id)
    assert _wire(setup.seen) == _wire(setup.log())
    assert [e.sequence_number for e in setup.seen] == [1, 2]


async def test_what_arrives_in_the_inbox_at_the_release_is_folded_right_after(
    setup: Setup,
) -> None:
    await setup.bus.watch(setup.session_id)
    await setup.hold_lease("a")
    await _until_numbering(setup)
    setup.bus.emit(setup.session_id, _token("mine"))
    await setup.bus.disown(setup.session_id)
    # Another process appends after the owner's last look at its inbox, before the release.
    setup.other.append_events(setup.session_id, [SessionExported(workflow_path="late")])
    await setup.store.run(lambda s: s.release_lease(setup.session_id, "a"))
    setup.bus.fold_inbox(setup.session_id)
    await setup.bus.drain(setup.session_id)
    assert [e.type for e in setup.seen] == ["agent:token", "session:exported"]
    assert _wire(setup.seen) == _wire(setup.log())
    assert setup.other.read_event_inbox(setup.session_id, 0) == []


def _check_reserved(setup: Setup, token: str) -> Callable[[StampedEvent], None]:
    """A listener asserting every number it is given was durable first: reserved or written."""

    def check(event: StampedEvent) -> None:
        reserved = setup.other.event_log_state(setup.session_id, None, 0, token)[1]
        written = [e.sequence_number for e in setup.log()]
        assert event.sequence_number <= reserved or event.sequence_number in written

    return check


def _exported(path: str) -> SessionExported:
    return SessionExported(workflow_path=path, format="jsonl")


async def test_past_the_reservation_the_database_numbers_until_a_new_block_is_claimed(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_log, "RESERVE_BLOCK", 2)
    setup.bus.subscribe(_check_reserved(setup, "a"))
    await setup.hold_lease("a")
    await _until_numbering(setup)
    # Five in one turn of the loop: two numbered here (the block), three by the database.
    for n in range(5):
        setup.bus.emit(setup.session_id, _exported(f"first {n}"))
    await until(lambda: len(setup.seen) == 5, "the burst's delivery")
    await _until_numbering(setup)  # a new block is reserved past what the database numbered
    for n in range(5):
        setup.bus.emit(setup.session_id, _exported(f"second {n}"))
    await setup.bus.disown(setup.session_id)
    log = setup.log()
    assert [e.sequence_number for e in log] == list(range(1, 11))
    assert _wire(setup.seen) == _wire(log)
    assert [getattr(e.payload, "workflow_path", None) for e in log] == [
        f"{which} {n}" for which in ("first", "second") for n in range(5)
    ]


async def test_write_behind_commits_extend_the_reservation(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_log, "RESERVE_BLOCK", 8)
    setup.bus.subscribe(_check_reserved(setup, "a"))
    await setup.hold_lease("a")
    await _until_numbering(setup)
    for n in range(40):
        setup.bus.emit(setup.session_id, _exported(str(n)))
        await setup.bus.drain(setup.session_id)  # each one written before the next
    assert setup.session_id in setup.bus.owned_inboxes()  # still numbered here
    await setup.bus.disown(setup.session_id)
    log = setup.log()
    assert [e.sequence_number for e in log] == list(range(1, 41))
    assert _wire(setup.seen) == _wire(log)
    assert setup.other.event_log_state(setup.session_id, None, 0, "a")[1] >= 40 + 8 // 2


async def test_a_takeover_after_delivered_unwritten_numbers_never_gives_them_again(
    setup: Setup,
) -> None:
    await setup.hold_lease("a")
    await _until_numbering(setup)
    gate = threading.Event()
    blocked = setup.store.submit(lambda _s: gate.wait(DEADLINE_S))  # the owner stalls
    try:
        for n in range(3):
            setup.bus.emit(setup.session_id, _exported(f"unwritten {n}"))
        await until(lambda: len(setup.seen) == 3, "delivery before the write")
        assert [e.sequence_number for e in setup.seen] == [1, 2, 3]
        # The owner is gone as far as another process can tell: it takes the lease over.
        dead = LeaseClock(
            now=1000.0, timeout_s=3600.0, host="this-host", pid=200, is_alive=lambda _p: False
        )
        assert setup.other.recover_abandoned(dead) == [setup.session_id]
        after = setup.other.append_events(setup.session_id, [_exported("after the takeover")])
    finally:
        gate.set()
    assert await blocked
    await setup.bus.drain(setup.session_id)
    assert after[0].sequence_number > max(e.sequence_number for e in setup.seen[:3])
    # What the stalled owner writes later is numbered past that too: no number twice.
    numbers = [e.sequence_number for e in setup.log()]
    assert len(numbers) == len(set(numbers)) == 4
    assert min(numbers) > 3


async def test_the_read_back_steps_over_a_killed_owners_hole(setup: Setup) -> None:
    await setup.bus.watch(setup.session_id)
    other = setup.other
    # Another process numbers under its lease, writes only its first number, and dies.
    other.acquire_lease(setup.session_id, "dead", _clock("dead", pid=300))
    first = StampedEvent(
        session_id=setup.session_id,
        sequence_number=1,
        timestamp="t",
        payload=_exported("written"),
    )
    assert other.append_numbered_events(setup.session_id, [first], [None], "dead")
    gone = LeaseClock(
        now=1000.0, timeout_s=3600.0, host="this-host", pid=200, is_alive=lambda _p: False
    )
    assert other.recover_abandoned(gone) == [setup.session_id]
    other.append_events(setup.session_id, [_exported("after the hole")])
    await setup.bus.catch_up(setup.session_id)
    numbers = [e.sequence_number for e in setup.seen]
    assert numbers == [1, event_log.RESERVE_BLOCK + 1]
    # A local append after it follows on, the hole stays a hole.
    setup.bus.emit(setup.session_id, _exported("here"))
    await setup.bus.drain(setup.session_id)
    assert [e.sequence_number for e in setup.seen][2:] == [event_log.RESERVE_BLOCK + 2]
    assert _wire(setup.seen) == _wire(setup.log())


async def test_numbers_whose_write_failed_are_never_given_again(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_log, "RESERVE_BLOCK", 2)
    real = SessionStore.append_numbered_events
    failing = [False]

    def write(self: SessionStore, *args: Any, **kwargs: Any) -> int | None:
        if failing[0]:
            raise StoreError("the disk is full")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SessionStore, "append_numbered_events", write)
    sid = setup.session_id
    await setup.hold_lease("a")
    await _until_numbering(setup)
    failing[0] = True
    setup.bus.emit(sid, _exported("1, never written"))
    setup.bus.emit(sid, _exported("2, never written"))
    await setup.bus.drain(sid)
    failing[0] = False
    # Past the reservation: the database numbers it, past what was handed out.
    setup.bus.emit(sid, _exported("3, by the database"))
    await setup.bus.drain(sid)
    await _until_numbering(setup)
    failing[0] = True
    setup.bus.emit(sid, _exported("4, never written"))
    await setup.bus.drain(sid)
    failing[0] = False
    await setup.bus.disown(sid)
    handed_out = setup.bus.handed_out(sid)
    assert await setup.store.run(lambda s: s.release_lease(sid, "a", handed_out))
    after = setup.other.append_events(sid, [_exported("5, after the release")])
    assert [e.sequence_number for e in setup.seen] == [1, 2, 3, 4]
    assert [e.sequence_number for e in setup.log()] == [3, 5]
    assert [e.sequence_number for e in after] == [5]


async def test_a_streaming_owners_writes_gather_and_a_drain_cuts_the_gathering_short(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A window far longer than the test may take: only the drain can end it.
    _gather_for(monkeypatch, DEADLINE_S * 10, DEADLINE_S * 10)
    await setup.hold_lease("a")
    await _until_numbering(setup)
    for n in range(30):
        setup.bus.emit(setup.session_id, _token(f"{n} "))
        await asyncio.sleep(0)  # one token per turn of the loop, as a paced stream
    await until(lambda: len(setup.seen) >= 1 and "29 " in _text(setup.seen), "delivery")
    assert setup.log() == []  # delivered, the write still gathering
    await asyncio.wait_for(setup.bus.drain(setup.session_id), DEADLINE_S)
    log = setup.log()
    assert [e.sequence_number for e in log] == list(range(1, len(log) + 1))  # gapless
    assert _wire(log) == _wire(setup.seen)
    assert _text(log) == "".join(f"{n} " for n in range(30))


async def test_a_disown_cuts_the_gathering_short_and_writes_everything(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    _gather_for(monkeypatch, DEADLINE_S * 10, DEADLINE_S * 10)
    await setup.hold_lease("a")
    await _until_numbering(setup)
    for n in range(10):
        setup.bus.emit(setup.session_id, _token(f"{n} "))
        await asyncio.sleep(0)
    await asyncio.wait_for(setup.bus.disown(setup.session_id), DEADLINE_S)
    log = setup.log()
    assert _text(log) == "".join(f"{n} " for n in range(10))
    assert _wire(log) == _wire(setup.seen)
    # Unowned now: the database numbers (persist, then deliver) with no gathering.
    setup.bus.emit(setup.session_id, _token("after"))
    await asyncio.wait_for(setup.bus.drain(setup.session_id), DEADLINE_S)
    assert _wire(setup.log()) == _wire(setup.seen)


async def test_a_token_numbered_once_the_gathering_is_old_enough_starts_the_commit(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No timer within the test's time: only the events' age can end each gathering.
    _gather_for(monkeypatch, 0.0, DEADLINE_S * 10)
    await setup.hold_lease("a")
    await _until_numbering(setup)
    for n in range(20):
        setup.bus.emit(setup.session_id, _token(f"{n} "))
        await asyncio.sleep(0)  # one token per turn of the loop, as a paced stream
    # Written while still owned, with nobody draining or disowning.
    await until(lambda: "19 " in _text(setup.log()), "the write-behind")
    assert _wire(setup.log()) == _wire(setup.seen)
    assert _text(setup.log()) == "".join(f"{n} " for n in range(20))


def _gather_for(monkeypatch: pytest.MonkeyPatch, token_after: float, longest: float) -> None:
    monkeypatch.setattr(bus_channel, "WRITE_BEHIND_GATHER_S", token_after)
    monkeypatch.setattr(bus_channel, "WRITE_BEHIND_LONGEST_S", longest)


def _text(events: list[StampedEvent]) -> str:
    return "".join(getattr(e.payload, "token", "") for e in events)
