"""Ordered delivery of updates."""

from __future__ import annotations

import asyncio

from acp.schema import SessionInfoUpdate

from relavium_lsp.acp.outbox import SessionUpdate, UpdateOutbox


def info(title: str) -> SessionInfoUpdate:
    return SessionInfoUpdate(session_update="session_info_update", title=title)


async def test_updates_are_sent_in_order_and_flush_waits_for_them() -> None:
    sent: list[str] = []
    gate = asyncio.Event()

    async def send(session_id: str, update: SessionUpdate) -> None:
        assert isinstance(update, SessionInfoUpdate)
        if update.title == "1":
            await gate.wait()
        sent.append(f"{session_id}:{update.title}")

    outbox = UpdateOutbox(send)
    await outbox.flush()  # nothing queued: returns at once
    for index in range(5):
        outbox.push("s", info(str(index)))
    flushed = asyncio.create_task(outbox.flush())
    await asyncio.wait({flushed}, timeout=0)
    assert not flushed.done() and sent == ["s:0"]
    gate.set()
    await flushed
    assert sent == ["s:0", "s:1", "s:2", "s:3", "s:4"]


async def test_a_disconnected_client_drops_the_rest_and_a_failure_skips_one() -> None:
    sent: list[str | None] = []

    async def send(session_id: str, update: SessionUpdate) -> None:
        assert isinstance(update, SessionInfoUpdate)
        if update.title == "boom":
            raise ValueError("bad update")
        if update.title == "gone":
            raise ConnectionError("closed")
        sent.append(update.title)

    outbox = UpdateOutbox(send)
    for title in ("a", "boom", "b", "gone", "never"):
        outbox.push("s", info(title))
    await outbox.flush()
    assert sent == ["a", "b"]
    await outbox.close()
    outbox.push("s", info("after close"))
    await outbox.flush()
    assert sent == ["a", "b"]
