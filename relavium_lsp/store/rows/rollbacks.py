"""Turns that were rolled out of the visible transcript, read back for exports (§2.5).

A failed or aborted turn is hidden from its user message on (``rolled_back = 1``); its rows
stay. This module groups them into turns again — a run starts at a rolled-back user message —
and labels each with how it ended, from its ``session:turn_completed`` event.
"""

from __future__ import annotations

import json
from typing import Any

from relavium_lsp.contracts.session import RolledBackTurn, SessionMessage
from relavium_lsp.store.db.connection import Connection, read_snapshot
from relavium_lsp.store.models import MESSAGE_COLUMNS, message_from_row
from relavium_lsp.store.rows import marker_views


def rolled_back_turns(connection: Connection, session_id: str) -> list[RolledBackTurn]:
    """Every rolled-back turn of a session, oldest first."""
    with read_snapshot(connection):
        rows = connection.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM session_messages"  # noqa: S608 - constant columns
            " WHERE session_id = ? AND rolled_back = 1 ORDER BY sequence_number",
            (session_id,),
        ).fetchall()
        if not rows:
            return []
        outcomes = _outcomes(connection, session_id)
        messages = [marker_views.resolve(connection, row, message_from_row) for row in rows]
    groups: list[list[SessionMessage]] = []
    for message in messages:
        if message.role == "user" or not groups:
            groups.append([message])
        else:
            groups[-1].append(message)
    turns = []
    for group in groups:
        stop_reason, error_code = outcomes.get(group[0].sequence_number, (None, None))
        turns.append(
            RolledBackTurn(
                user_message_sequence=group[0].sequence_number,
                stop_reason=stop_reason,
                error_code=error_code,
                messages=group,
            )
        )
    return turns


def _outcomes(connection: Connection, session_id: str) -> dict[int, tuple[Any, str | None]]:
    """``user message sequence → (stop reason, error code)`` of turns that did not complete."""
    events = connection.execute(
        "SELECT type, payload FROM session_events WHERE session_id = ?"
        " AND type IN ('session:turn_started', 'session:turn_completed')"
        " ORDER BY sequence_number",
        (session_id,),
    ).fetchall()
    found: dict[int, tuple[Any, str | None]] = {}
    started: int | None = None
    for kind, payload_text in events:
        payload = json.loads(payload_text)
        if kind == "session:turn_started":
            started = int(payload["userMessageSequence"])
        elif started is not None:
            reason = payload.get("stopReason")
            if reason in ("aborted", "error"):
                error = payload.get("error") or {}
                found[started] = (reason, error.get("code"))
            started = None
    return found
