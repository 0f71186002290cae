"""What keeps disk waits off a turn's critical path (issue 25), and that nothing is lost by it.

- The user message is committed without waiting for its fsync; the write-ahead log is synced
  while the model request is under way, and always before the turn settles.
- The between-turns checkpoint waits until the session has been idle for a moment, so a
  follow-up sent at once never queues behind it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

import pytest

from relavium_lsp.engine.sessions import live as live_module
from relavium_lsp.engine.sessions import session as session_module
from relavium_lsp.store import async_store
from relavium_lsp.store.sessions import SessionStore
from tests.unit.engine.engine_harness import engine, scripted, text_reply


async def test_the_user_message_is_synced_before_the_turn_settles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[Path] = []
    real_fsync = async_store._fsync

    def recording_fsync(path: Path) -> None:
        real_fsync(path)
        synced.append(path)

    monkeypatch.setattr(async_store, "_fsync", recording_fsync)
    async with engine(tmp_path, scripted(text_reply("one"), text_reply("two"))) as h:
        session = await h.start()
        assert (await h.engine.send(session.id, "first")).stop_reason == "stop"
        assert synced == [tmp_path / "home" / "history.db-wal"]
        assert (await h.engine.send(session.id, "second")).stop_reason == "stop"
        assert len(synced) == 2
        messages, _ = await h.engine.transcript(session.id)
        assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]


async def test_a_failed_sync_is_logged_and_the_turn_still_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_fsync(path: Path) -> None:
        raise OSError("disk went away")

    monkeypatch.setattr(async_store, "_fsync", failing_fsync)
    warnings: list[logging.LogRecord] = []
    recorder = logging.Handler(logging.WARNING)
    recorder.emit = warnings.append  # type: ignore[method-assign]
    session_module._log.addHandler(recorder)  # direct: other tests may stop propagation
    # import-linter (test_architecture) configures logging with disable_existing_loggers.
    monkeypatch.setattr(session_module._log, "disabled", False)
    async with engine(tmp_path, scripted(text_reply("fine"))) as h:
        session = await h.start()
        try:
            result = await h.engine.send(session.id, "hello")
        finally:
            session_module._log.removeHandler(recorder)
        assert result.stop_reason == "stop"
        assert any("could not sync" in record.getMessage() for record in warnings)
        messages, _ = await h.engine.transcript(session.id)
        assert [m.role for m in messages] == ["user", "assistant"]


async def test_a_missing_log_file_is_nothing_to_sync(tmp_path: Path) -> None:
    async_store._fsync(tmp_path / "never-created.db-wal")  # no error


async def test_the_checkpoint_runs_once_the_session_is_idle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkpoints: list[str] = []
    monkeypatch.setattr(SessionStore, "checkpoint", lambda self: checkpoints.append("done"))
    async with engine(tmp_path, scripted(text_reply("one"))) as h:
        started = await h.start()
        await h.engine.send(started.id, "hi")
        session = await h.engine._live.get(started.id)  # the live session behind the door
        assert checkpoints == []  # not while settling: only after the idle delay
        timer = session._checkpoint_timer
        assert timer is not None
        delay = timer.when() - asyncio.get_running_loop().time()
        assert 0 < delay <= session_module.CHECKPOINT_IDLE_S
        session._start_checkpoint()  # what the timer does when it fires
        assert session._checkpoint is not None
        await session._checkpoint
        assert checkpoints == ["done"]


async def test_a_follow_up_turn_cancels_the_pending_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkpoints: list[str] = []
    monkeypatch.setattr(SessionStore, "checkpoint", lambda self: checkpoints.append("done"))
    monkeypatch.setattr(session_module, "CHECKPOINT_IDLE_S", 3600.0)
    async with engine(tmp_path, scripted(text_reply("one"), text_reply("two"))) as h:
        started = await h.start()
        await h.engine.send(started.id, "first")
        session = await h.engine._live.get(started.id)  # the live session behind the door
        pending = session._checkpoint_timer
        assert pending is not None and not pending.cancelled()
        await h.engine.send(started.id, "second")
        assert pending.cancelled()
        assert session._checkpoint_timer is not None  # re-armed after the second turn
        assert checkpoints == [] and session._checkpoint is None


async def test_an_abort_while_waiting_for_the_disk_still_lets_the_turn_settle() -> None:
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    waiting = asyncio.ensure_future(session_module._wait_for_disk(never))
    await asyncio.sleep(0)  # let it reach the wait (a yield, not a timed wait)
    waiting.cancel()
    await waiting  # returns normally: the turn goes on to settle
    assert not waiting.cancelled()
    never.cancel()


async def test_the_secret_detector_is_loaded_off_the_loop_when_a_session_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35: its first load (``requests`` and all) must not land on a turn's first write."""
    loaded_on: list[str] = []
    real_rules = live_module.detector_rules

    def recording_rules() -> object:
        loaded_on.append(threading.current_thread().name)
        return real_rules()

    monkeypatch.setattr(live_module, "detector_rules", recording_rules)
    async with engine(tmp_path, scripted(text_reply("fine"))) as h:
        assert h.engine._live.detector_warmup is None  # not at start-up
        await h.start()
        warmup = h.engine._live.detector_warmup
        assert warmup is not None
        await warmup
        await h.start()  # once per server, not per session
        assert h.engine._live.detector_warmup is warmup
    assert len(loaded_on) == 1 and loaded_on[0] != threading.main_thread().name
