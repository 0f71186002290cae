"""What a turn start reads in one trip changes nothing a model receives.

The tail is read with the user message and chosen in memory (``store/tail_walk.py``). Every
request must still carry exactly the history a fresh read of the database projects — also
after another process (a second connection) appended to the session between turns.
"""

from __future__ import annotations

from pathlib import Path

from relavium_lsp.contracts.content import TextPart, ToolCallPart, ToolResultPart
from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.llm.projection import project_messages
from relavium_lsp.store.media import MediaStore
from tests.unit.engine.engine_harness import (
    Harness,
    engine,
    scripted,
    text_reply,
    tool_reply,
)


async def fresh_projection(h: Harness, session_id: str, tmp_path: Path) -> tuple[object, ...]:
    """The visible history as another connection reads it, projected from new objects.

    Without the newest message: the last request went out before its answer existed.
    """
    messages = (await h.store.run(lambda s: list(s.iter_messages(session_id))))[:-1]
    copies = [SessionMessage.model_validate(message.model_dump()) for message in messages]
    return project_messages(copies, MediaStore(tmp_path / "unused-media"))


async def test_every_request_carries_the_history_another_process_appended(
    tmp_path: Path,
) -> None:
    provider = scripted(
        text_reply("one"),
        tool_reply("read_file", {"path": "notes.txt"}, "c1"),
        text_reply("two"),
        text_reply("three"),
        text_reply("four"),
    )
    async with engine(tmp_path, provider) as h:
        (h.workspace / "notes.txt").write_text("remember", encoding="utf-8")
        session = (await h.start()).record.id
        assert (await h.engine.send(session, "first")).stop_reason == "stop"
        assert (await h.engine.send(session, "read my notes")).stop_reason == "stop"
        # Another window adds to the transcript between turns (its own connection).
        await h.store.run(
            lambda s: s.append_message(session, "user", [TextPart(text="a note from elsewhere")])
        )
        assert (await h.engine.send(session, "third")).stop_reason == "stop"
        assert (await h.engine.send(session, "fourth")).stop_reason == "stop"
        last = provider.requests[-1]
        assert last.messages == await fresh_projection(h, session, tmp_path)
        texts = [
            part.text
            for message in last.messages
            for part in message.content
            if isinstance(part, TextPart)
        ]
        assert "a note from elsewhere" in texts
        assert texts[-1] == "fourth"
        assert any(
            isinstance(part, ToolCallPart) for m in last.messages for part in m.content
        ) and any(isinstance(part, ToolResultPart) for m in last.messages for part in m.content)


async def test_a_small_window_still_gets_exactly_the_tail_that_fits(tmp_path: Path) -> None:
    replies = [text_reply("x" * 400) for _ in range(6)]
    provider = scripted(*replies, context_window=6_000)
    async with engine(tmp_path, provider) as h:
        session = (await h.start()).record.id
        for turn in range(6):
            assert (await h.engine.send(session, f"turn {turn} " + "y" * 2_000)).stop_reason == (
                "stop"
            )
        visible = await h.store.run(lambda s: list(s.iter_messages(session)))
        before_reply = visible[:-1]  # the last request went out before its answer existed
        sent = provider.requests[-1].messages
        assert 1 < len(sent) < len(before_reply)  # the window cut the history
        newest = before_reply[-len(sent) :]
        assert sent == project_messages(newest, MediaStore(tmp_path / "unused-media"))


async def test_an_unreadable_row_fails_the_turn_and_rolls_its_message_back(
    tmp_path: Path,
) -> None:
    # The tail read moved into the user message's store trip; a failure there must still
    # fail the turn after the message is committed, so that it is rolled back as before.
    provider = scripted(text_reply("one"), text_reply("never"))
    async with engine(tmp_path, provider) as h:
        session = (await h.start()).record.id
        assert (await h.engine.send(session, "first")).stop_reason == "stop"
        await h.store.run(
            lambda s: s._connection.execute(
                "UPDATE session_messages SET content = 'not json' WHERE session_id = ?"
                " AND sequence_number = 1",
                (session,),
            )
        )
        result = await h.engine.send(session, "second")
        assert result.stop_reason == "error"
        assert result.error is not None and "unreadable" in result.error.message
        rows = await h.store.run(
            lambda s: s._connection.execute(
                "SELECT sequence_number, rolled_back FROM session_messages WHERE session_id = ?"
                " ORDER BY sequence_number",
                (session,),
            ).fetchall()
        )
        assert [tuple(row) for row in rows] == [(1, 0), (2, 0), (3, 1)]
        assert len(provider.requests) == 1
