"""Automatic introspection passes (issue 23 item 4): new_session, turn_limit, idle.

A real engine (encrypted store, real config files, scripted model); time is a fake
:class:`Timers` the test advances, and ``drain()`` waits for the background work, so
nothing here sleeps or measures time.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from relavium_lsp.contracts.agent import OFFLINE_MODEL_ID
from relavium_lsp.contracts.events import SessionCheckpointFailed, TokenUsage
from relavium_lsp.engine.memory.introspection_triggers import IntrospectionTriggers
from relavium_lsp.llm.seam import ErrorChunk, LlmChunk, LlmError, LlmRequest
from tests.unit.engine.engine_harness import (
    CountingProvider,
    Harness,
    engine,
    scripted,
    text_reply,
)

MEMO = "DESCRIPTION: Notes\nMEMORY:\n- remembered"


@dataclass
class FakeTimer:
    when: float
    callback: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


@dataclass
class FakeTimers:
    """Timers that fire only when the test advances the clock."""

    now: float = 0.0
    timers: list[FakeTimer] = field(default_factory=list)

    def call_later(self, delay: float, callback: Callable[[], None]) -> FakeTimer:
        timer = FakeTimer(self.now + delay, callback)
        self.timers.append(timer)
        return timer

    def advance(self, seconds: float) -> None:
        self.now += seconds
        due = sorted(
            (t for t in self.timers if not t.cancelled and t.when <= self.now),
            key=lambda t: t.when,
        )
        for timer in due:
            self.timers.remove(timer)
            timer.callback()


class GatedProvider(CountingProvider):
    """Holds its ``hold_call``-th call (0-based) until ``gate`` opens; tells ``entered``."""

    def __init__(self, inner: CountingProvider, hold_call: int) -> None:
        super().__init__(inner._inner)
        self.hold_call = hold_call
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()
        self.cancelled = 0

    async def stream(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        number = len(self.requests)
        self.requests.append(request)
        if number == self.hold_call:
            self.entered.set()
            try:
                await self.gate.wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        async for chunk in self._inner.stream(request):
            yield chunk


def triggers(h: Harness) -> IntrospectionTriggers:
    found = h.engine._triggers
    assert found is not None
    return found


async def reasons(h: Harness, session_id: str) -> list[str]:
    await triggers(h).drain()
    return [c.reason for c in await h.engine.list_introspections(session_id)]


def global_config(text: str) -> None:
    home = Path(os.environ["RELAVIUM_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text, encoding="utf-8")


async def test_idle_fires_after_the_delay_and_activity_restarts_it(tmp_path: Path) -> None:
    timers = FakeTimers()
    provider = scripted(text_reply("hi"), text_reply(MEMO))
    toml = "[introspection]\nidle_seconds = 60\n"
    async with engine(
        tmp_path,
        provider,
        model=OFFLINE_MODEL_ID,
        user_toml=toml,
        auto_introspection=True,
        timers=timers,
    ) as h:
        sid = (await h.start()).record.id
        await h.engine.send(sid, "hello")
        assert await reasons(h, sid) == []
        assert triggers(h).idle_timers == {sid}
        timers.advance(59)
        assert await reasons(h, sid) == []
        await h.engine.append_note(sid, "user", "one more thing")  # activity: starts again
        await triggers(h).drain()
        timers.advance(59)
        assert await reasons(h, sid) == []
        timers.advance(1)
        assert await reasons(h, sid) == ["idle"]
        assert len(provider.requests) == 2
        assert "one more thing" in str(provider.requests[1].messages)
        # Nothing happened since: no timer, nothing more.
        assert triggers(h).idle_timers == frozenset()


async def test_idle_is_off_for_a_paid_model_unless_the_user_allows_it(tmp_path: Path) -> None:
    timers = FakeTimers()
    provider = scripted(text_reply("hi"), text_reply("again"), text_reply(MEMO))
    # A project file cannot allow idle passes on a paid model ...
    async with engine(
        tmp_path,
        provider,
        model="gpt-4o-mini",
        user_toml="[introspection]\nidle_seconds = 30\n",
        project_toml="[introspection]\nidle_on_paid_providers = true\n",
        auto_introspection=True,
        timers=timers,
    ) as h:
        sid = (await h.start()).record.id
        await h.engine.send(sid, "hello")
        assert await reasons(h, sid) == []
        assert triggers(h).idle_timers == frozenset()
        timers.advance(3600)
        assert await reasons(h, sid) == []
        # ... the user's own config.toml can.
        global_config("[introspection]\nidle_seconds = 30\nidle_on_paid_providers = true\n")
        await h.engine.send(sid, "more")
        await triggers(h).drain()
        assert triggers(h).idle_timers == {sid}
        timers.advance(30)
        assert await reasons(h, sid) == ["idle"]


async def test_turn_limit_every_n_turns_and_at_max_turns(tmp_path: Path) -> None:
    provider = scripted(
        text_reply("one"),
        text_reply("two"),
        text_reply(MEMO),
        text_reply("three"),
        text_reply("four"),
        text_reply(MEMO),
        text_reply("five"),
        text_reply(MEMO),
    )
    toml = "[chat]\nmax_turns = 5\n\n[introspection]\nevery_turns = 2\nidle_seconds = 0\n"
    async with engine(
        tmp_path, provider, user_toml=toml, auto_introspection=True, timers=FakeTimers()
    ) as h:
        sid = (await h.start()).record.id
        await h.engine.send(sid, "1")
        assert await reasons(h, sid) == []
        await h.engine.send(sid, "2")
        assert await reasons(h, sid) == ["turn_limit"]
        await h.engine.send(sid, "3")
        assert await reasons(h, sid) == ["turn_limit"]
        await h.engine.send(sid, "4")
        assert await reasons(h, sid) == ["turn_limit", "turn_limit"]
        # The fifth turn is the last one max_turns allows: checkpointed although 5 is odd.
        await h.engine.send(sid, "5")
        assert await reasons(h, sid) == ["turn_limit", "turn_limit", "turn_limit"]
        refused = await h.engine.send(sid, "6")
        assert refused.error is not None and refused.error.code == "turn_limit"
        assert await reasons(h, sid) == ["turn_limit"] * 3  # nothing new to introspect
        assert len(provider.requests) == 8


async def test_a_turn_decided_late_does_not_delay_the_next_turns_pass(tmp_path: Path) -> None:
    """A busy machine: turn 1's decision runs only once turn 2 has begun (a CI run's hang)."""
    inner = scripted(text_reply("one"), text_reply("two"), text_reply(MEMO))
    provider = GatedProvider(inner, hold_call=1)
    toml = "[introspection]\nevery_turns = 2\nidle_seconds = 0\n"
    async with engine(
        tmp_path, provider, user_toml=toml, auto_introspection=True, timers=FakeTimers()
    ) as h:
        sid = (await h.start()).record.id
        await triggers(h).drain()  # the new session's look at earlier sessions is done
        async with triggers(h)._deciding:  # turn 1's decision waits here...
            await h.engine.send(sid, "1")
            second = asyncio.ensure_future(h.engine.send(sid, "2"))
            await provider.entered.wait()  # ...until turn 2 counts in the record, not the log
        await triggers(h).drain(passes=False)
        provider.gate.set()
        assert (await second).stop_reason == "stop"
        assert await reasons(h, sid) == ["turn_limit"]
        assert len(provider.requests) == 3


async def test_a_new_session_checkpoints_the_earlier_ones_once(tmp_path: Path) -> None:
    provider = scripted(text_reply("a"), text_reply(MEMO), text_reply("b"), text_reply(MEMO))
    async with engine(
        tmp_path, provider, auto_introspection=True, timers=FakeTimers()
    ) as h:  # defaults: on_new_session on, also for a paid model
        first = (await h.start(description="Mine")).record.id
        await h.engine.send(first, "work on A")
        assert await reasons(h, first) == []
        second = (await h.start()).record.id
        assert await reasons(h, first) == ["new_session"]
        # An automatic pass keeps the description the user wrote.
        record = await h.engine.record(first)
        assert (record.description, record.description_source) == ("Mine", "user")
        assert await reasons(h, second) == []  # nothing in it yet
        third = (await h.start()).record.id
        assert await reasons(h, first) == ["new_session"]  # nothing new since
        await h.engine.send(third, "work on C")
        await h.start()
        assert await reasons(h, third) == ["new_session"]
        assert await reasons(h, first) == ["new_session"]
        assert len(provider.requests) == 4


async def test_a_new_sessions_first_turn_waits_for_the_earlier_sessions_passes(
    tmp_path: Path,
) -> None:
    answer = MEMO + "\nWORKSPACE MEMORY:\n## Conventions\nIndent with tabs."
    inner = scripted(text_reply("a"), text_reply(answer), text_reply("b"))
    provider = GatedProvider(inner, hold_call=1)
    async with engine(tmp_path, provider, auto_introspection=True, timers=FakeTimers()) as h:
        first = (await h.start()).record.id
        await h.engine.send(first, "work on A")
        second = (await h.start()).record.id
        await provider.entered.wait()  # A's new_session pass is in its model call
        turn = asyncio.create_task(h.engine.send(second, "go"))
        while second not in triggers(h).waiting_first_turn:  # noqa: ASYNC110
            await asyncio.sleep(0)  # a yield, not a delay: the turn reaches its wait
        assert "session:turn_started" not in h.types(second)
        provider.gate.set()
        assert (await turn).stop_reason == "stop"
        assert await reasons(h, first) == ["new_session"]
        # What A's pass proposed for the workspace memory waits for the user (issue 35): it
        # is not in B's very first prompt, but it is there to accept.
        assert "Indent with tabs." not in provider.requests[2].system
        [proposal] = await h.engine.memory.proposals(str(h.workspace))
        assert proposal.session_id == first and proposal.reason == "new_session"
        assert "Indent with tabs." in proposal.text


async def test_a_waiting_first_turn_can_be_aborted(tmp_path: Path) -> None:
    inner = scripted(text_reply("a"), text_reply(MEMO), text_reply("b"))
    provider = GatedProvider(inner, hold_call=1)
    async with engine(tmp_path, provider, auto_introspection=True, timers=FakeTimers()) as h:
        first = (await h.start()).record.id
        await h.engine.send(first, "work on A")
        second = (await h.start()).record.id
        await provider.entered.wait()
        turn = asyncio.create_task(h.engine.send(second, "go"))
        while second not in triggers(h).waiting_first_turn:  # noqa: ASYNC110
            await asyncio.sleep(0)  # a yield, not a delay
        assert await h.engine.abort(second)
        result = await turn
        assert result.stop_reason == "aborted"
        assert "session:turn_started" not in h.types(second)
        assert (await h.engine.transcript(second))[0] == []  # nothing was stored
        assert not await h.engine.abort(second)  # nothing left to abort
        provider.gate.set()
        assert await reasons(h, first) == ["new_session"]  # A's pass went on
        assert (await h.engine.send(second, "again")).stop_reason == "stop"


async def test_switches_off(tmp_path: Path) -> None:
    provider = scripted(text_reply("a"), text_reply("b"))
    toml = "[introspection]\non_new_session = false\nevery_turns = 1\nenabled = false\n"
    timers = FakeTimers()
    async with engine(
        tmp_path,
        provider,
        model=OFFLINE_MODEL_ID,
        user_toml=toml,
        auto_introspection=True,
        timers=timers,
    ) as h:
        sid = (await h.start()).record.id
        await h.engine.send(sid, "hello")
        await h.start()
        timers.advance(10**6)
        assert await reasons(h, sid) == []
        assert triggers(h).idle_timers == frozenset()
        assert len(provider.requests) == 1


async def test_a_turn_cancels_a_running_pass_which_never_overlaps_it(tmp_path: Path) -> None:
    inner = scripted(text_reply("hi"), text_reply(MEMO), text_reply("next"), text_reply(MEMO))
    provider = GatedProvider(inner, hold_call=1)
    timers = FakeTimers()
    async with engine(
        tmp_path,
        provider,
        model=OFFLINE_MODEL_ID,
        user_toml="[introspection]\nidle_seconds = 5\n",
        auto_introspection=True,
        timers=timers,
    ) as h:
        sid = (await h.start()).record.id
        await h.engine.send(sid, "hello")
        await triggers(h).drain()
        timers.advance(5)
        await provider.entered.wait()  # the idle pass is in its model call
        lease = await h.store.run(lambda s: s.read_lease(sid))
        assert lease is not None  # it holds the session's lease
        result = await h.engine.send(sid, "the user goes on")
        assert result.stop_reason == "stop"
        assert provider.cancelled == 1
        assert await reasons(h, sid) == []
        assert "session:checkpoint_failed" not in h.types(sid)  # a cancel is no failure
        # The turn restarted the delay; the next pass runs.
        timers.advance(5)
        assert await reasons(h, sid) == ["idle"]
        assert await h.store.run(lambda s: s.read_lease(sid)) is None


async def test_a_turn_no_editor_started_also_stops_a_running_pass(tmp_path: Path) -> None:
    inner = scripted(text_reply("hi"), text_reply(MEMO), text_reply("answered"))
    provider = GatedProvider(inner, hold_call=1)
    timers = FakeTimers()
    async with engine(
        tmp_path,
        provider,
        model=OFFLINE_MODEL_ID,
        user_toml="[introspection]\nidle_seconds = 5\n",
        auto_introspection=True,
        timers=timers,
    ) as h:
        sid = (await h.start()).record.id
        await h.engine.send(sid, "hello")
        await triggers(h).drain()
        timers.advance(5)
        await provider.entered.wait()
        # As a peer message or a delegating parent does: straight to the session.
        session = await h.engine._live.get(sid)
        result = await session.send_message("a peer asks", author="peer")
        assert result.stop_reason == "stop"
        assert provider.cancelled == 1
        assert await reasons(h, sid) == []
        assert triggers(h).idle_timers == {sid}  # the turn was activity: the delay restarts


async def test_close_and_delete_cancel_pending_passes(tmp_path: Path) -> None:
    inner = scripted(text_reply("hi"), text_reply(MEMO), text_reply("b"))
    provider = GatedProvider(inner, hold_call=1)
    timers = FakeTimers()
    # (no new_session pass: the second session's first turn would wait for it)
    toml = "[introspection]\nidle_seconds = 5\non_new_session = false\n"
    async with engine(
        tmp_path,
        provider,
        model=OFFLINE_MODEL_ID,
        user_toml=toml,
        auto_introspection=True,
        timers=timers,
    ) as h:
        sid = (await h.start()).record.id
        await h.engine.send(sid, "hello")
        await triggers(h).drain()
        timers.advance(5)
        await provider.entered.wait()
        other = (await h.start()).record.id
        await h.engine.send(other, "another")
        await triggers(h).drain(passes=False)  # the gated pass is still running
        assert other in triggers(h).idle_timers
        await h.engine.delete(other)
        assert other not in triggers(h).idle_timers
        await h.engine.close()  # cancels the running pass and releases its lease
        assert provider.cancelled == 1
        assert await h.store.run(lambda s: s.read_lease(sid)) is None
        assert [c.reason for c in await h.store.run(lambda s: _checkpoints(s, sid))] == []


def _checkpoints(store: object, session_id: str) -> list[object]:
    from relavium_lsp.store.rows.event_reads import list_checkpoints

    return list(list_checkpoints(store.connection, session_id))  # type: ignore[attr-defined]


async def test_a_failed_pass_is_recorded_and_the_session_goes_on(tmp_path: Path) -> None:
    failing = [
        ErrorChunk(
            error=LlmError(kind="unknown", message="upstream said no"),
            usage=TokenUsage(),
        )
    ]
    provider = scripted(text_reply("a"), failing, text_reply("b"))
    toml = "[introspection]\nevery_turns = 1\nidle_seconds = 0\n"
    async with engine(
        tmp_path, provider, user_toml=toml, auto_introspection=True, timers=FakeTimers()
    ) as h:
        sid = (await h.start()).record.id
        await h.engine.send(sid, "hello")
        assert await reasons(h, sid) == []
        (failed,) = h.payloads(sid, "session:checkpoint_failed")
        assert isinstance(failed, SessionCheckpointFailed)
        assert failed.reason == "turn_limit" and "upstream said no" in failed.message
        assert (await h.engine.send(sid, "still here")).stop_reason == "stop"


@pytest.mark.parametrize(
    ("toml", "line", "field"),
    [
        ("[introspection]\nenabled = true\nevery_turns = -1\n", 3, "introspection.every_turns"),
        ('[introspection]\nidle_seconds = "soon"\n', 2, "introspection.idle_seconds"),
        ("[introspection]\n\non_new_sesion = true\n", 3, "introspection.on_new_sesion"),
    ],
)
def test_malformed_values_are_config_errors_with_file_and_line(
    tmp_path: Path, toml: str, line: int, field: str
) -> None:
    from relavium_lsp.config import load_workspace_config
    from relavium_lsp.errors import ConfigError

    project = tmp_path / ".relavium" / "project.toml"
    project.parent.mkdir(parents=True)
    project.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_workspace_config(tmp_path, home=tmp_path / "home")
    assert raised.value.file == str(project)
    assert raised.value.line == line
    assert raised.value.field == field


def test_a_project_cannot_switch_on_what_the_user_switched_off(tmp_path: Path) -> None:
    from relavium_lsp.config import load_workspace_config

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        "[introspection]\nenabled = false\non_new_session = false\n", encoding="utf-8"
    )
    project = tmp_path / ".relavium" / "project.toml"
    project.parent.mkdir()
    project.write_text(
        "[introspection]\nenabled = true\non_new_session = true\nevery_turns = 3\n"
        "idle_on_paid_providers = true\n",
        encoding="utf-8",
    )
    settings = load_workspace_config(tmp_path, home=home).introspection
    assert (settings.enabled, settings.on_new_session) == (False, False)
    assert not settings.idle_on_paid_providers
    # More often than the user's own (here the default, 20) is looser; rarer is tighter.
    assert settings.every_turns == 20
