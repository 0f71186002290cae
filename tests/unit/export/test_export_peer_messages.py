"""Peer messages (§2.5) ride in both export formats and the documents still validate."""

from __future__ import annotations

import json

from relavium_lsp.contracts.peers import PeerDelivery, PeerMessage
from relavium_lsp.export.documents import render_export
from relavium_lsp.export.jsonl import export_jsonl
from relavium_lsp.export.jsonl_import import import_jsonl
from relavium_lsp.export.workflow_yaml import parse_workflow
from tests.unit.export.export_support import SESSION_ID, Transcript, make_record

OTHER = "5d9e7b1c-2a44-4a0f-8c1e-9b7a6e5d4c31"
THIRD = "9a1f3c2e-6b7d-4e8f-a0b1-c2d3e4f5a6b7"


def _peers() -> list[PeerMessage]:
    sent = PeerMessage(
        id="peer-1",
        from_session_id=SESSION_ID,
        from_agent="relavium-default",
        text="Does app.py still compile?",
        mode="await_reply",
        hops=1,
        call_id="call-7",
        created_at="2025-03-01T09:00:03.000Z",
        deliveries=[
            PeerDelivery(
                to_session_id=OTHER,
                status="replied",
                sequence_number=4,
                delivered_at="2025-03-01T09:00:03.500Z",
                reply="It does.",
                updated_at="2025-03-01T09:00:05.000Z",
            )
        ],
    )
    received = PeerMessage(
        id="peer-2",
        from_session_id=OTHER,
        from_agent="coder",
        text="FYI: I renamed add() to plus().",
        mode="fire_and_forget",
        hops=1,
        created_at="2025-03-01T09:00:06.000Z",
        deliveries=[
            PeerDelivery(
                to_session_id=SESSION_ID,
                status="delivered",
                sequence_number=3,
                delivered_at="2025-03-01T09:00:06.000Z",
                updated_at="2025-03-01T09:00:06.000Z",
            ),
            PeerDelivery(
                to_session_id=THIRD,
                status="failed",
                error="session is deleted",
                updated_at="2025-03-01T09:00:06.000Z",
            ),
        ],
    )
    return [sent, received]


def _session() -> Transcript:
    transcript = Transcript()
    transcript.add("user", "Check app.py")
    transcript.add("assistant", "It is fine.")
    transcript.add("user", "[from coder] FYI: I renamed add() to plus().")
    return transcript


def test_the_jsonl_export_carries_sent_and_received_messages_and_still_imports() -> None:
    record, messages = make_record(turn_count=1), _session().messages
    text = export_jsonl(record, messages, peer_messages=_peers())
    records = [json.loads(line) for line in text.splitlines()]
    peers = [r for r in records if r["record"] == "peer-message"]
    assert [(p["direction"], p["message"]["id"]) for p in peers] == [
        ("sent", "peer-1"),
        ("received", "peer-2"),
    ]
    assert peers[0]["message"]["deliveries"][0]["reply"] == "It does."
    assert [d["status"] for d in peers[1]["message"]["deliveries"]] == ["delivered", "failed"]
    assert records[-1]["record"] == "session-close"  # still the last line
    read = import_jsonl(text)
    imported, imported_messages = read.record, read.messages
    assert len(imported_messages) == len(messages)  # kept for the record, not restored
    assert imported.id != record.id
    # Without peer messages the document is exactly what it was before.
    assert "peer-message" not in export_jsonl(record, messages)


def test_the_workflow_export_carries_them_and_parses_back() -> None:
    record, messages = make_record(turn_count=1), _session().messages
    outcome = render_export(record, messages, "workflow", peer_messages=_peers())
    document = parse_workflow(outcome.content)
    carried = document.metadata.relavium_export if document.metadata else None
    assert carried is not None
    assert carried.peer_messages == _peers()
    plain = render_export(record, messages, "workflow")
    assert "peerMessages" not in plain.content
    # The only difference is the added metadata key.
    assert outcome.content.count("\n") > plain.content.count("\n")
