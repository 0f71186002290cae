"""Introspection checkpoints, read back from the durable event log (§2.5).

A checkpoint is a ``session:checkpoint`` event; nothing else stores it, so the log is the one
record and exports and lists read it from there.
"""

from __future__ import annotations

import json

from relavium_lsp.contracts.events import SessionCheckpoint
from relavium_lsp.store.sessions import SessionStore

CHECKPOINT_EVENT = "session:checkpoint"


def latest_checkpoint(store: SessionStore, session_id: str) -> SessionCheckpoint | None:
    """The session's newest checkpoint, or ``None``."""
    row = store.connection.execute(
        "SELECT payload FROM session_events WHERE session_id = ? AND type = ?"
        " ORDER BY sequence_number DESC LIMIT 1",
        (session_id, CHECKPOINT_EVENT),
    ).fetchone()
    return None if row is None else SessionCheckpoint.model_validate(json.loads(row[0]))


def list_checkpoints(store: SessionStore, session_id: str) -> list[SessionCheckpoint]:
    """Every checkpoint of the session, oldest first."""
    rows = store.connection.execute(
        "SELECT payload FROM session_events WHERE session_id = ? AND type = ?"
        " ORDER BY sequence_number",
        (session_id, CHECKPOINT_EVENT),
    ).fetchall()
    return [SessionCheckpoint.model_validate(json.loads(row[0])) for row in rows]
