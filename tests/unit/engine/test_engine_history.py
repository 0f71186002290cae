"""Compaction, trimming, crash recovery and sequence numbers across engines."""

from __future__ import annotations

import os
from pathlib import Path

from relavium_lsp.contracts.content import TextPart
from relavium_lsp.llm.seam import ErrorChunk, LlmError
from relavium_lsp.store.db.keys import DbKey
from tests.unit.engine.engine_harness import engine, scripted, text_reply


async def test_threshold_compaction_summarises_and_resume_honours_the_marker(
    tmp_path: Path,
) -> None:
    long_text = "word " * 2000  # ~2,500 estimated tokens per message
    provider = scripted(
        text_reply("ok one", usage=(3_000, 5)),
        text_reply("SUMMARY: user said two long things", usage=(3_500, 20)),
        text_reply("ok three", usage=(400, 5)),
        context_window=4_000,
    )
    toml = "[chat]\ncompact_threshold = 0.5\n"
    async with engine(tmp_path, provider, project_toml=toml) as h:
        session = await h.start()
        await h.engine.send(session.id, long_text)
        result = await h.engine.send(session.id, "and now?")
        assert result.text.strip() == "ok three"
        types = h.types(session.id)
        assert types.index("session:compacting") < types.index("session:compacted")
        assert types.index("session:compacted") < types.index(
            "session:turn_started", types.index("session:compacting")
        )
        compacted = h.payloads(session.id, "session:compacted")[0]
        assert compacted.reason == "threshold"
        assert compacted.tokens_after < compacted.tokens_before
        # the third call saw the summary, not the long message
        third = provider.requests[2]
        seen = " ".join(
            p.text for m in third.messages for p in m.content if isinstance(p, TextPart)
        )
        assert "SUMMARY" in seen and long_text not in seen
        # nothing was deleted, and a resume loads the compacted view
        everything = await h.store.run(lambda s: list(s.iter_messages(session.id)))
        assert any(
            long_text in " ".join(p.text for p in m.content if isinstance(p, TextPart))
            for m in everything
        )
        resumed = await h.engine.resume(session.id)
        assert resumed.messages[0].compaction is not None
        assert resumed.messages[0].compaction.mode == "summarize"
        assert all(long_text not in str(m.content) for m in resumed.messages)
        await h.assert_books_balance(session.id)  # the summary call was paid for


async def test_failed_summary_falls_back_to_a_trim(tmp_path: Path) -> None:
    failing = [ErrorChunk(error=LlmError(kind="overloaded", message="busy"))]
    provider = scripted(
        *[text_reply(f"answer {n}") for n in range(4)],
        failing,
        text_reply("after trim"),
    )
    async with engine(tmp_path, provider, project_toml="[chat]\nmax_messages = 6\n") as h:
        session = await h.start()
        for n in range(4):
            await h.engine.send(session.id, f"question {n}")
        result = await h.engine.send(session.id, "question 4")
        assert result.text.strip() == "after trim"
        types = h.types(session.id)
        assert "session:compacting" in types and "session:trimmed" in types
        assert "session:compacted" not in types
        trimmed = h.payloads(session.id, "session:trimmed")[0]
        assert trimmed.reason == "max_messages"
        assert trimmed.messages_after < trimmed.messages_before
        # the model's view keeps the newest messages verbatim behind the marker
        last = provider.requests[-1]
        texts = [p.text for m in last.messages for p in m.content if isinstance(p, TextPart)]
        assert "question 4" in texts and "question 0" not in texts
        assert any("trimmed" in t for t in texts)


async def test_manual_trim_and_summarize(tmp_path: Path) -> None:
    provider = scripted(text_reply("a"), text_reply("b"), text_reply("A summary."))
    async with engine(tmp_path, provider) as h:
        session = await h.start()
        await h.engine.send(session.id, "one")
        await h.engine.send(session.id, "two")
        before = await h.store.run(lambda s: s.get_session(session.id))
        trimmed = await h.engine.compact(session.id, mode="trim")
        assert trimmed.type == "session:trimmed"
        # Four messages are too few to trim: nothing is dropped and no marker is added.
        assert (trimmed.messages_before, trimmed.messages_after) == (4, 4)
        assert trimmed.tokens_after == trimmed.tokens_before
        after = await h.store.run(lambda s: s.get_session(session.id))
        assert before is not None and after is not None
        assert after.message_count == before.message_count == 4
        summarized = await h.engine.compact(session.id, mode="summarize")
        assert summarized.type == "session:compacted"
        tail = await h.store.run(lambda s: s.load_tail_within_budget(session.id, 100_000))
        assert len(tail) == 1 and tail[0].compaction is not None


async def test_a_crashed_turn_is_marked_interrupted_on_resume(tmp_path: Path) -> None:
    db, key = tmp_path / "db" / "history.db", DbKey(os.urandom(32), "env")
    async with engine(
        tmp_path / "first", scripted(text_reply("fine")), db_path=db, key=key
    ) as first:
        session = await first.start()
        await first.engine.send(session.id, "before the crash")
        # What a kill -9 mid-turn leaves behind: the user message, a streaming status.
        await first.store.run(
            lambda s: s.append_message(session.id, "user", [TextPart(text="lost turn")])
        )
        await first.store.run(lambda s: s.set_status(session.id, "streaming"))
    provider = scripted(text_reply("recovered"))
    async with engine(tmp_path / "second", provider, db_path=db, key=key) as second:
        resumed = await second.engine.resume(session.id)
        assert resumed.session.status == "idle"
        marker = resumed.messages[-1]
        assert marker.role == "system" and marker.interruption is not None
        result = await second.engine.send(session.id, "are you there?")
        assert result.text.strip() == "recovered"
        sent = provider.requests[0]
        assert sent.messages[-1].role == "user"
        roles = [m.role for m in sent.messages]
        assert roles.count("user") >= 2  # the interrupted question is still visible to the model


async def test_event_sequences_are_gapless_across_two_engines_on_one_database(
    tmp_path: Path,
) -> None:
    db, key = tmp_path / "db" / "history.db", DbKey(os.urandom(32), "env")
    async with (
        engine(
            tmp_path / "a",
            scripted(text_reply("from a"), text_reply("a again")),
            db_path=db,
            key=key,
        ) as a,
        engine(tmp_path / "b", scripted(text_reply("from b")), db_path=db, key=key) as b,
    ):
        session = await a.start()
        await a.engine.send(session.id, "hello a")
        await b.engine.resume(session.id)
        await b.engine.send(session.id, "hello b")
        other = await b.start()
        await a.engine.send(session.id, "back to a")
        events = await a.engine.events_after(session.id, 0)
        seqs = [e.sequence_number for e in events]
        assert seqs == list(range(1, len(seqs) + 1))
        assert [e.type for e in events].count("session:turn_completed") == 3
        assert (await b.engine.events_after(other.id, 0))[0].sequence_number == 1
        backlog = await b.engine.events_after(session.id, seqs[4])
        assert [e.sequence_number for e in backlog] == seqs[5:]


async def test_abort_during_auto_compaction_leaves_no_trace_of_the_turn(tmp_path: Path) -> None:
    import asyncio

    import httpx

    from tests.unit.engine.engine_harness import openai_provider
    from tests.unit.llm.wire_servers import LoopbackServer, openai_stream

    with LoopbackServer() as server:
        server.script(
            openai_stream(text=["fine"], usage=(6_000, 5)),  # > 0.5 x the 8,192 default window
            openai_stream(text=["summary that never ends"], ending="stall"),
        )
        toml = "[chat]\ncompact_threshold = 0.5\n"
        async with httpx.AsyncClient() as client:
            provider = openai_provider(server.url + "/v1", client)
            async with engine(tmp_path, provider, project_toml=toml, model="unknown-small") as h:
                session = await h.start()
                await h.engine.send(session.id, "first")
                compacting = asyncio.Event()
                await h.engine.subscribe(
                    lambda e: compacting.set() if e.type == "session:compacting" else None
                )
                turn = asyncio.create_task(h.engine.send(session.id, "second"))
                await compacting.wait()
                assert await h.engine.abort(session.id)
                result = await turn
                assert result.stop_reason == "aborted"
                messages, _ = await h.engine.transcript(session.id)
                assert [m.role for m in messages] == ["user", "assistant"]  # "second" never stuck
                assert await h.status(session.id) == "idle"
                assert "session:turn_started" not in h.types(session.id)[3:]
