"""Turn lifecycle against a real store, real tools and scripted or loopback models."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from relavium_lsp.contracts.content import ToolCallPart, ToolResultPart
from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.errors import InvalidInput, SessionBusy, SessionEnded
from relavium_lsp.llm.seam import ErrorChunk, LlmError
from tests.unit.engine.engine_harness import (
    DEADLINE_S,
    Harness,
    engine,
    openai_provider,
    scripted,
    text_reply,
    tool_reply,
    until,
)
from tests.unit.llm.wire_servers import LoopbackServer, openai_error, openai_stream


async def test_a_plain_answer(tmp_path: Path) -> None:
    provider = scripted(text_reply("Hello there friend", usage=(12, 3)))
    async with engine(tmp_path, provider) as h:
        session = await h.start(title="greeting")
        result = await h.engine.send(session.id, "hi")
        assert result.stop_reason == "stop"
        assert result.error is None
        assert result.text == "Hello there friend "
        assert result.tokens_used.input_tokens == 12
        types = h.types(session.id)
        assert types[0] == "session:started"
        assert types[1] == "session:turn_started"
        assert "agent:token" in types
        assert types[-2:] == ["cost:updated", "session:turn_completed"]
        tokens = "".join(p.token for p in h.payloads(session.id, "agent:token"))
        assert tokens == "Hello there friend "
        seqs = [e.sequence_number for e in h.events if e.session_id == session.id]
        assert seqs == list(range(1, len(seqs) + 1))
        messages, _ = await h.engine.transcript(session.id)
        assert [m.role for m in messages] == ["user", "assistant"]
        assert messages[1].model_id == "gpt-4o-mini"
        assert await h.status(session.id) == "idle"
        # the system prompt was rendered with the session context
        assert str(h.workspace) in provider.requests[0].system
        await h.assert_books_balance(session.id)


async def test_two_tool_rounds_are_persisted_as_they_complete(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("read_file", {"path": "notes.txt"}, "call-1"),
        tool_reply("write_file", {"path": "out.txt", "content": "done\n"}, "call-2"),
        text_reply("All done"),
    )
    async with engine(tmp_path, provider) as h:
        (h.workspace / "notes.txt").write_text("remember the milk\n", encoding="utf-8")
        session = await h.start()
        result = await h.engine.send(session.id, "copy my notes")
        assert result.stop_reason == "stop", result.error
        messages, _ = await h.engine.transcript(session.id)
        assert [m.role for m in messages] == [
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
        ]
        call = messages[1].content[0]
        assert isinstance(call, ToolCallPart) and call.name == "read_file"
        read_result = messages[2].content[0]
        assert isinstance(read_result, ToolResultPart) and "remember the milk" in read_result.result
        assert (h.workspace / "out.txt").read_text(encoding="utf-8") == "done\n"
        # the model saw the tool result on its second call
        second = provider.requests[1]
        assert any(
            isinstance(part, ToolResultPart) and "remember the milk" in part.result
            for message in second.messages
            for part in message.content
        )
        types = h.types(session.id)
        assert types.count("agent:tool_call") == 2
        assert types.count("agent:tool_result") == 2
        assert types.count("agent:approval_requested") == 1  # the write asked (approval = ask)
        assert types.count("cost:updated") == 3
        assert types.count("session:turn_completed") == 1
        assert [r.tool_id for r in h.host.asked] == ["write_file"]
        await h.assert_books_balance(session.id)


async def test_a_rejected_write_is_a_failed_tool_result_not_a_failed_turn(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("write_file", {"path": "out.txt", "content": "x"}, "call-1"),
        text_reply("Understood"),
    )
    async with engine(tmp_path, provider) as h:
        h.host.decision = "reject"
        session = await h.start()
        result = await h.engine.send(session.id, "write it")
        assert result.stop_reason == "stop"
        assert not (h.workspace / "out.txt").exists()
        messages, _ = await h.engine.transcript(session.id)
        rejected = messages[2].content[0]
        assert isinstance(rejected, ToolResultPart) and rejected.is_error
        tool_result = h.payloads(session.id, "agent:tool_result")[0]
        assert tool_result.error_code == "tool_denied"


async def test_provider_error_mid_turn_is_typed_counted_and_rolled_back(tmp_path: Path) -> None:
    failing = [
        ErrorChunk(
            error=LlmError(kind="overloaded", message="busy", status=529),
            usage=TokenUsage(input_tokens=7),
        )
    ]
    provider = scripted(text_reply("first answer"), failing)
    async with engine(tmp_path, provider) as h:
        session = await h.start()
        await h.engine.send(session.id, "one")
        result = await h.engine.send(session.id, "two")
        assert result.stop_reason == "error"
        assert result.error is not None
        assert result.error.code == "provider_unavailable"
        assert result.error.retryable
        assert result.tokens_used.input_tokens == 7  # real tokens of the failed call counted
        completed = h.payloads(session.id, "session:turn_completed")[-1]
        assert completed.error.code == "provider_unavailable"
        messages, _ = await h.engine.transcript(session.id)
        assert [m.role for m in messages] == ["user", "assistant"]  # "two" rolled out
        assert result.last_sequence == messages[-1].sequence_number
        # A provider failure ended the turn: the session says so until the next turn runs.
        assert await h.status(session.id) == "failed"
        await h.assert_books_balance(session.id)
        costs = await h.store.run(lambda s: s.get_costs(session.id))
        assert sum(c.call_count for c in costs) == 2


async def test_loopback_http_errors_surface_as_typed_errors(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        server.script(openai_error(401, "bad key"))
        async with (
            httpx.AsyncClient() as client,
            engine(tmp_path, openai_provider(server.url + "/v1", client)) as h,
        ):
            session = await h.start()
            result = await h.engine.send(session.id, "hello")
            assert result.error is not None and result.error.code == "provider_auth"
            assert not result.error.retryable
            assert "sk-test-not-a-real-key" not in result.error.message


async def test_abort_mid_stream_rolls_back_and_settles_once(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        server.script(
            openai_stream(text=["partial ", "answer "], ending="stall"),
            openai_stream(text=["fresh"]),
        )
        async with (
            httpx.AsyncClient() as client,
            engine(tmp_path, openai_provider(server.url + "/v1", client)) as h,
        ):
            session = await h.start()
            first_token = asyncio.Event()
            await h.engine.subscribe(
                lambda e: first_token.set() if e.type == "agent:token" else None
            )
            turn = asyncio.create_task(h.engine.send(session.id, "tell me a long story"))
            await first_token.wait()
            assert h.engine.is_running(session.id)
            with pytest.raises(SessionBusy):
                await h.engine.send(session.id, "queue jump")
            assert await h.engine.abort(session.id)
            result = await turn
            assert result.stop_reason == "aborted"
            assert result.error is None
            assert await server.wait_for_disconnect(0)
            assert h.types(session.id).count("session:turn_completed") == 1
            messages, _ = await h.engine.transcript(session.id)
            assert messages == []
            assert await h.status(session.id) == "idle"
            again = await h.engine.send(session.id, "short one")
            assert again.text == "fresh"
            assert not await h.engine.abort(session.id)  # nothing running


async def test_cancel_is_terminal_until_resumed(tmp_path: Path) -> None:
    provider = scripted(text_reply("hi"), text_reply("back again"))
    async with engine(tmp_path, provider) as h:
        session = await h.start()
        await h.engine.send(session.id, "hello")
        await h.engine.cancel(session.id)
        assert h.types(session.id)[-1] == "session:cancelled"
        assert (await h.engine.record(session.id)).status == "ended"
        with pytest.raises(SessionEnded):
            await h.engine.send(session.id, "still there?")
        resumed = await h.engine.resume(session.id)
        assert resumed.session.status == "idle"
        assert [m.role for m in resumed.messages] == ["user", "assistant"]
        assert resumed.last_event_sequence == h.events[-1].sequence_number
        result = await h.engine.send(session.id, "welcome back")
        assert result.text.strip() == "back again"


async def test_empty_messages_and_bad_media_are_refused_before_anything_happens(
    tmp_path: Path,
) -> None:
    from relavium_lsp.contracts.content import Base64Source, MediaPart

    provider = scripted()
    async with engine(tmp_path, provider) as h:
        session = await h.start()
        with pytest.raises(InvalidInput):
            await h.engine.send(session.id, "   ")
        with pytest.raises(InvalidInput):
            await h.engine.send(
                session.id,
                "see",
                [MediaPart(mime_type="image/png", source=Base64Source(data="!!"))],
            )
        assert provider.requests == []
        assert h.types(session.id) == ["session:started"]


async def test_several_sessions_stream_concurrently_without_crosstalk(tmp_path: Path) -> None:
    provider = scripted(text_reply("alpha alpha"), text_reply("beta beta"))
    async with engine(tmp_path, provider) as h:
        first, second = await h.start(), await h.start()
        results = await asyncio.gather(h.engine.send(first.id, "a"), h.engine.send(second.id, "b"))
        assert {r.text.strip() for r in results} == {"alpha alpha", "beta beta"}
        for session, result in zip((first, second), results, strict=True):
            tokens = "".join(p.token for p in h.payloads(session.id, "agent:token"))
            assert tokens == result.text
            seqs = [e.sequence_number for e in h.events if e.session_id == session.id]
            assert seqs == list(range(1, len(seqs) + 1))


async def test_abort_after_the_user_message_is_committed_rolls_it_back(tmp_path: Path) -> None:
    from relavium_lsp.contracts.session import Selection, SessionContext

    provider = scripted(text_reply("never asked"))
    async with engine(tmp_path, provider) as h:
        (h.workspace / "a.py").write_text("x = 1\n", encoding="utf-8")
        context = SessionContext(
            working_dir=str(h.workspace), selection=Selection(file="a.py", start_line=1, end_line=1)
        )
        session = await h.engine.start(context=context, agent_ref="helper")
        h.host.read_gate = asyncio.Event()  # planning the turn reads the selected lines
        turn = asyncio.create_task(h.engine.send(session.id, "about the selection"))
        await h.host.reading_event.wait()  # the user message is committed by now
        assert await h.engine.abort(session.id)
        result = await turn
        assert result.stop_reason == "aborted"
        messages, _ = await h.engine.transcript(session.id)
        assert messages == []
        assert provider.requests == []
        assert await h.status(session.id) == "idle"
        record = await h.engine.record(session.id)
        assert record.status == "idle"


async def test_an_abort_while_the_user_message_commits_still_rolls_it_back(
    tmp_path: Path,
) -> None:
    import threading

    provider = scripted(text_reply("never asked"))
    async with engine(tmp_path, provider) as h:
        session = await h.start()
        store = h.engine._services.store
        held, release = asyncio.Event(), threading.Event()
        loop = asyncio.get_running_loop()

        def hold(_: object) -> None:
            loop.call_soon_threadsafe(held.set)
            release.wait(DEADLINE_S)

        holding = store.submit(hold)
        await held.wait()
        turn = asyncio.create_task(h.engine.send(session.id, "hello"))
        # The turn's one start trip (refusal, checks, commit, tail) waits behind the hold.
        await until(lambda: store._executor._queue.qsize() == 1, "the start trip is queued")
        aborting = asyncio.create_task(h.engine.abort(session.id))
        await until(lambda: turn_cancelling(h, session.id), "the abort reached the turn")
        release.set()
        await holding
        assert await aborting
        result = await turn
        assert result.stop_reason == "aborted"
        messages, _ = await h.engine.transcript(session.id)
        assert messages == []  # committed, then rolled back
        rows = await h.store.run(
            lambda s: s.connection.execute(
                "SELECT role, rolled_back FROM session_messages WHERE session_id = ?",
                (session.id,),
            ).fetchall()
        )
        assert [tuple(row) for row in rows] == [("user", 1)]
        assert provider.requests == []
        assert await h.status(session.id) == "idle"


def turn_cancelling(h: Harness, session_id: str) -> bool:
    live = h.engine._live._live[session_id]
    return live._turn is not None and live._turn.cancelling() > 0


async def test_a_commit_in_flight_finishes_before_a_cancel_lands() -> None:
    from relavium_lsp.engine.waiting import finish_before_cancelling

    started, gate, committed = asyncio.Event(), asyncio.Event(), []

    async def commit() -> int:
        started.set()
        await gate.wait()
        committed.append(7)
        return 7

    task = asyncio.create_task(finish_before_cancelling(commit()))
    await started.wait()
    task.cancel()
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert committed == [7]


async def test_unknown_session_ids_leave_nothing_behind(tmp_path: Path) -> None:
    import uuid

    from relavium_lsp.errors import SessionNotFound

    async with engine(tmp_path, scripted()) as h:
        for _ in range(50):
            with pytest.raises(SessionNotFound):
                await h.engine.send(str(uuid.uuid4()), "hello?")
        assert h.engine._live._loading == {}
        assert h.engine._live._live == {}
