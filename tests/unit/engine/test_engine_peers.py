"""Peer messages in the engine: a delivery queued in a process that went away is appended when
the recipient is next loaded (the end-to-end flows are tests/e2e/test_peers.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from relavium_lsp.contracts.peers import PeerDelivery, PeerMessage
from relavium_lsp.errors import InvalidInput
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.rows import peer_messages
from tests.unit.engine.engine_harness import engine, scripted


async def test_a_queued_delivery_is_appended_when_the_recipient_is_next_loaded(
    tmp_path: Path,
) -> None:
    db, key = tmp_path / "home" / "history.db", DbKey(os.urandom(32), "env")
    async with engine(tmp_path, scripted(), db_path=db, key=key) as h:
        sender, recipient = (await h.start()).id, (await h.start()).id
    queued = PeerMessage(
        id="m1",
        from_session_id=sender,
        from_agent="helper",
        text="left for you",
        mode="fire_and_forget",
        hops=1,
        created_at="2026-11-26T21:00:00.000Z",
        deliveries=[
            PeerDelivery(
                to_session_id=recipient, status="pending", updated_at="2026-11-26T21:00:00.000Z"
            )
        ],
    )
    async with engine(tmp_path, scripted(), db_path=db, key=key) as h:
        await h.store.run(lambda s: peer_messages.create_message(s.connection, queued))
        await h.engine.session(recipient)  # loading it delivers what waited
        messages, _ = await h.engine.transcript(recipient)
        assert [(m.role, m.agent_slug) for m in messages] == [("user", "helper")]
        [listed] = await h.engine.list_peer_messages(recipient, "received")
        assert listed.deliveries[0].status == "delivered"
        assert listed.deliveries[0].sequence_number == messages[0].sequence_number
        await h.engine.session(sender)  # nothing waits for the sender
        assert (await h.engine.transcript(sender))[0] == []


async def test_the_workspace_peers_block_sets_the_caps(tmp_path: Path) -> None:
    toml = "[peers]\nmax_message_chars = 5\nmax_recipients = 1\n"
    async with engine(tmp_path, scripted(), project_toml=toml) as h:
        sender, first, second = [(await h.start()).id for _ in range(3)]
        with pytest.raises(InvalidInput, match="at most 5 characters"):
            await h.engine.send_peer_message(sender, [first], "too long", "fire_and_forget")
        with pytest.raises(InvalidInput, match="1 to 1 sessions"):
            await h.engine.send_peer_message(sender, [first, second], "hi", "fire_and_forget")
        sent = await h.engine.send_peer_message(sender, [first], "hi", "fire_and_forget")
        assert [d.status for d in sent.deliveries] == ["delivered"]
        (h.workspace / ".relavium" / "project.toml").write_text("", encoding="utf-8")
        # The block is read at each send: without it the defaults apply again.
        sent = await h.engine.send_peer_message(sender, [first, second], "hello", "fire_and_forget")
        assert len(sent.deliveries) == 2
