"""The event log's rows of streamed tokens: the fast JSON is the generic dump's very text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_records import clock, text

from relavium_lsp.contracts.base import compact_json
from relavium_lsp.contracts.events import AgentToken, StampedEvent
from relavium_lsp.store import event_log
from relavium_lsp.store.sessions import SessionStore

# Any text a provider may stream except lone surrogates (no UTF-8 for SQLite to store).
_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(token=_TEXT, model=_TEXT)
def test_a_token_row_is_the_generic_dump(token: str, model: str) -> None:
    payload = AgentToken(token=token, model=model)
    generic = compact_json(payload.model_dump(mode="json", by_alias=True))
    assert event_log._json(payload) == generic
    assert json.loads(event_log._json(payload)) == {"type": "agent:token", **payload.to_wire()}


@pytest.mark.parametrize("token", ["", "a ", 'say "hi" \\ back', "é 日本 🙂", "\n\t\x00", "</>"])
def test_stored_token_rows_read_back_as_the_events_written(
    store: SessionStore, session_id: str, token: str
) -> None:
    store.begin_turn(session_id, text("go"), lease=("a", clock(1000.0, "a")))
    events = [
        StampedEvent(
            session_id=session_id,
            sequence_number=n,
            timestamp=f"2026-11-27T04:00:00.00{n}Z",
            payload=AgentToken(token=f"{token}{n}", model="m"),
        )
        for n in (1, 2, 3)
    ]
    assert store.append_numbered_events(session_id, events, [None, None, None], "a")
    assert store.events_after(session_id, 0, 10) == events
