"""Migration 7 in the store: peer messages and deliveries, handoff caps, filters and audit."""

from __future__ import annotations

from store_records import make_record

from relavium_lsp.contracts.delegation import HandoffInputFilter
from relavium_lsp.contracts.peers import PeerDelivery, PeerMessage
from relavium_lsp.store.rows import handoffs, peer_messages
from relavium_lsp.store.sessions import SessionStore


def _message(sender: str, recipients: list[str], text: str = "hello") -> PeerMessage:
    return PeerMessage(
        id=f"m-{text}",
        from_session_id=sender,
        from_agent="relavium-default",
        text=text,
        mode="fire_and_forget",
        hops=1,
        created_at="2026-11-26T21:00:00.000Z",
        deliveries=[
            PeerDelivery(to_session_id=r, status="pending", updated_at="2026-11-26T21:00:00.000Z")
            for r in recipients
        ],
    )


def test_deliveries_move_on_and_list_by_direction(store: SessionStore, session_id: str) -> None:
    others = [make_record(), make_record()]
    for record in others:
        store.create_session(record)
    a, b = (record.id for record in others)
    connection = store.connection
    peer_messages.create_message(connection, _message(session_id, [a, b]))
    peer_messages.create_message(connection, _message(a, [session_id], "back"))
    peer_messages.update_delivery(connection, "m-hello", a, "delivered", sequence_number=3)
    peer_messages.update_delivery(connection, "m-hello", b, "failed", error="busy")
    sent = peer_messages.get_message(connection, "m-hello")
    assert sent is not None
    by_recipient = {d.to_session_id: d for d in sent.deliveries}
    assert by_recipient[a].status == "delivered" and by_recipient[a].sequence_number == 3
    assert by_recipient[a].delivered_at is not None
    assert by_recipient[b].status == "failed" and by_recipient[b].error == "busy"
    assert by_recipient[b].delivered_at is None
    assert [m.id for m in peer_messages.list_messages(connection, session_id, "sent")] == [
        "m-hello"
    ]
    assert [m.id for m in peer_messages.list_messages(connection, session_id, "received")] == [
        "m-back"
    ]
    assert len(peer_messages.list_messages(connection, session_id)) == 2
    assert [m.id for m in peer_messages.list_messages(connection, b, "received")] == ["m-hello"]


def test_purge_erases_what_a_session_sent_and_received(
    store: SessionStore, session_id: str
) -> None:
    other = make_record()
    store.create_session(other)
    connection = store.connection
    peer_messages.create_message(connection, _message(session_id, [other.id]))
    peer_messages.create_message(connection, _message(other.id, [session_id], "back"))
    store.purge_session(other.id)
    [kept] = peer_messages.list_messages(connection, session_id)
    assert kept.id == "m-hello" and kept.deliveries == []
    assert peer_messages.get_message(connection, "m-back") is None


def test_newest_session_of_an_agent_in_a_workspace(store: SessionStore) -> None:
    old = make_record(working_dir="/work/project", updated_at="2026-01-01T00:00:00.000Z")
    new = make_record(working_dir="/work/project", updated_at="2026-02-01T00:00:00.000Z")
    elsewhere = make_record(working_dir="/work/other", updated_at="2026-03-01T00:00:00.000Z")
    ended = make_record(
        working_dir="/work/project", status="ended", updated_at="2026-04-01T00:00:00.000Z"
    )
    for record in (old, new, elsewhere, ended):
        store.create_session(record)
    connection = store.connection
    find = peer_messages.newest_session_of_agent
    assert find(connection, "/work/project", "relavium-default", besides="x") == new.id
    assert find(connection, "/work/project", "relavium-default", besides=new.id) == old.id
    assert find(connection, "/work/project", "someone-else", besides="x") is None


def test_a_handoff_keeps_its_cap_and_filter_and_is_audited(
    store: SessionStore, session_id: str
) -> None:
    child = make_record()
    store.create_session(child)
    connection = store.connection
    chosen = HandoffInputFilter(kind="last_n", last_n=4, strip_tool_results=True)
    made = handoffs.record_handoff(
        connection,
        session_id=session_id,
        child_session_id=child.id,
        from_agent="lead",
        to_agent="coder",
        reason="r",
        sequence_number=2,
        call_id="c1",
        cost_cap_microcents=1234,
        input_filter=chosen,
        context_messages=4,
    )
    assert handoffs.list_handoffs(connection, session_id) == [made]
    assert handoffs.child_handoff(connection, child.id) == made
    assert handoffs.child_handoff(connection, session_id) is None
    assert made.cost_cap_microcents == 1234 and made.input_filter == chosen
    handoffs.record_audit(connection, made, "resumed", "loaded")
    handoffs.record_audit(connection, made, "replayed")
    for seen_from in (session_id, child.id):
        audit = handoffs.list_audit(connection, seen_from)
        assert [(a.action, a.handoff_id) for a in audit] == [
            ("resumed", made.id),
            ("replayed", made.id),
        ]
    store.purge_session(session_id)
    assert handoffs.list_audit(connection, session_id) == []


def test_a_pending_delivery_is_appended_exactly_once(store: SessionStore, session_id: str) -> None:
    other = make_record()
    store.create_session(other)
    message = _message(session_id, [other.id])
    connection = store.connection
    peer_messages.create_message(connection, message)
    assert [m.id for m in peer_messages.pending_for(connection, other.id)] == [message.id]
    sequence = store.deliver_peer_message(message, other.id, "from the store test")
    assert sequence == 1
    assert store.deliver_peer_message(message, other.id, "again") is None
    assert peer_messages.pending_for(connection, other.id) == []
    stored, _ = store.get_transcript(other.id)
    assert [(m.role, m.agent_slug) for m in stored] == [("user", "relavium-default")]
    delivered = peer_messages.get_message(connection, message.id)
    assert delivered is not None and delivered.deliveries[0].sequence_number == 1
