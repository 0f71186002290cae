"""Providers' opaque reasoning state, kept beside the assistant message that carried it.

A message's durable content has no place for a reasoning signature (``contracts/content.py``):
what a transcript, an event or an export shows can never hold one. The signatures a
provider needs back on the next turn — Anthropic's thinking signatures, OpenAI Responses'
encrypted reasoning items, Gemini's thought signatures (``llm/reasoning_state.py``) — are
kept here instead, in the same encrypted database, one JSON list per message: the
signature of each of the message's reasoning parts in order (``null`` for an unsigned one).
Rows go with their message (``ON DELETE CASCADE``); nothing else reads them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from relavium_lsp.store.db import Connection

Signatures = list[str | None]
_BATCH = 500  # well under SQLite's limit on bound parameters


def keep_signatures(connection: Connection, message_id: str, signatures: Signatures) -> None:
    """Store a message's signatures (nothing when none of its parts has one)."""
    if not any(signatures):
        return
    connection.execute(
        "INSERT OR REPLACE INTO message_reasoning_signatures (message_id, signatures)"
        " VALUES (?, ?)",
        (message_id, json.dumps(signatures)),
    )


def signatures_of(connection: Connection, message_ids: Sequence[str]) -> dict[str, Signatures]:
    """The kept signatures of those messages that have any, by message id."""
    found: dict[str, Signatures] = {}
    for start in range(0, len(message_ids), _BATCH):
        batch = list(message_ids[start : start + _BATCH])
        marks = ", ".join("?" * len(batch))
        query = f"SELECT message_id, signatures FROM message_reasoning_signatures WHERE message_id IN ({marks})"  # noqa: S608, E501 - placeholders only
        rows = connection.execute(query, batch)
        for message_id, text in rows:
            value = json.loads(text)
            if isinstance(value, list):
                found[str(message_id)] = [item if isinstance(item, str) else None for item in value]
    return found
