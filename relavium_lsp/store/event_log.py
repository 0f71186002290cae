"""The durable event log's SQL: numbering, the owner's explicit numbers, and the inbox.

Who numbers a session's events (``docs/design.md`` §3.1):

- nobody holds the session's lease (or it is this connection's own, or stale): the appending
  transaction allocates ``MAX + 1 …`` itself — after first folding what waits in the inbox;
- a turn's lease is held by this connection and its bus has claimed the numbering: the bus
  stamps events in memory, delivers them, and writes them behind with those very numbers
  (:func:`insert_numbered`), deleting the inbox rows it folded in the same commit;
- another process holds a live lease: the payloads go to ``session_event_inbox`` unnumbered
  (:func:`put_in_inbox`) and the owner folds them into its numbering.

The owner never hands out a number it has not reserved durably first (the lease row's
``numbered_through``, :func:`reserve`): a takeover after the owner died leaves a floor at that
reservation (:func:`keep_floor`) and the log numbers past it, so a number the dead owner
delivered but never wrote is never given to another event — a hole, which clients step over.

Every function runs inside the caller's write transaction (or is a plain read).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from relavium_lsp.contracts.base import compact_json
from relavium_lsp.contracts.events import (
    EVENT_PAYLOAD_ADAPTER,
    AgentToken,
    EventPayload,
    StampedEvent,
)
from relavium_lsp.store.db import Connection

_INSERT = (
    "INSERT INTO session_events (session_id, sequence_number, type, timestamp, payload)"
    " VALUES (?, ?, ?, ?, ?)"
)


def last_sequence(connection: Connection, session_id: str) -> int:
    """The newest event's sequence number (0 when there is none)."""
    row = connection.execute(
        "SELECT COALESCE(MAX(sequence_number), 0) FROM session_events WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    return int(row[0])


# How many numbers an owner reserves ahead; it extends the reservation in a write-behind
# commit once less than half of a block is left (tests shrink it to reach the limit).
RESERVE_BLOCK = 1000


def numbers_used(connection: Connection, session_id: str) -> int:
    """The highest number given out: the log's newest, or a takeover's floor above it."""
    row = connection.execute(
        "SELECT MAX(COALESCE((SELECT MAX(sequence_number) FROM session_events"
        " WHERE session_id = ?1), 0), COALESCE((SELECT numbered_through FROM session_event_floor"
        " WHERE session_id = ?1), 0))",
        (session_id,),
    ).fetchone()
    return int(row[0])


def reserve(connection: Connection, session_id: str, token: str, through: int) -> int | None:
    """Let the lease's owner number up to ``through``; its reservation (``None``: not its lease)."""
    row = connection.execute(
        "UPDATE session_leases SET numbered_through = MAX(numbered_through, ?)"
        " WHERE session_id = ? AND owner_token = ? RETURNING numbered_through",
        (through, session_id, token),
    ).fetchone()
    return None if row is None else int(row[0])


def reservation(connection: Connection, session_id: str, token: str | None) -> int:
    """How far the lease under ``token`` may number (0: not that lease)."""
    row = connection.execute(
        "SELECT numbered_through FROM session_leases WHERE session_id = ? AND owner_token = ?",
        (session_id, token),
    ).fetchone()
    return 0 if row is None else int(row[0])


def keep_floor(connection: Connection, session_id: str, token: str) -> None:
    """Before a stale lease is deleted: the log numbers past what its owner reserved."""
    raise_floor(connection, session_id, reservation(connection, session_id, token))


def raise_floor(connection: Connection, session_id: str, through: int) -> None:
    """The log numbers past ``through`` from now on (numbers handed out, maybe unwritten)."""
    if through > numbers_used(connection, session_id):
        connection.execute(
            "INSERT INTO session_event_floor (session_id, numbered_through) VALUES (?, ?)"
            " ON CONFLICT (session_id) DO UPDATE SET numbered_through = excluded.numbered_through",
            (session_id, through),
        )


def _json(payload: EventPayload) -> str:
    if type(payload) is AgentToken:
        # By far the commonest row (one per streamed delta, on the store's thread that
        # competes with the event loop for the GIL): the very text the generic path gives
        # (a unit test compares them), without pydantic's dump.
        token, model = compact_json(payload.token), compact_json(payload.model)
        return f'{{"type":"agent:token","token":{token},"model":{model}}}'
    return compact_json(payload.model_dump(mode="json", by_alias=True))


def insert(connection: Connection, events: Sequence[StampedEvent]) -> None:
    """Write stamped events as they are (numbers, timestamps)."""
    connection.executemany(
        _INSERT,
        [
            (e.session_id, e.sequence_number, e.payload.type, e.timestamp, _json(e.payload))
            for e in events
        ],
    )


def allocate(
    connection: Connection,
    session_id: str,
    payloads: Sequence[EventPayload],
    now: str,
    floor: int = 0,
) -> list[StampedEvent]:
    """Fold the inbox, then number ``payloads`` after it: the stamped events, inbox first.

    ``floor``: numbers this process handed out already (a write of them may have failed).
    """
    last = max(numbers_used(connection, session_id), floor)
    waiting = take_inbox(connection, session_id)
    everything = [payload for _id, payload in waiting] + list(payloads)
    stamped = [
        StampedEvent(session_id=session_id, sequence_number=last + n, timestamp=now, payload=p)
        for n, p in enumerate(everything, start=1)
    ]
    insert(connection, stamped)
    return stamped


def put_in_inbox(
    connection: Connection, session_id: str, payloads: Sequence[EventPayload], now: str
) -> None:
    """Leave payloads for the process that numbers this session's events right now."""
    connection.executemany(
        "INSERT INTO session_event_inbox (session_id, type, payload, created_at)"
        " VALUES (?, ?, ?, ?)",
        [(session_id, payload.type, _json(payload), now) for payload in payloads],
    )


def read_inbox(
    connection: Connection, session_id: str, after_id: int = 0
) -> list[tuple[int, EventPayload]]:
    """The inbox rows of a session past ``after_id``, oldest first (read only)."""
    rows = connection.execute(
        "SELECT id, payload FROM session_event_inbox WHERE session_id = ? AND id > ? ORDER BY id",
        (session_id, after_id),
    ).fetchall()
    return [
        (int(row[0]), EVENT_PAYLOAD_ADAPTER.validate_python(json.loads(row[1]))) for row in rows
    ]


def take_inbox(connection: Connection, session_id: str) -> list[tuple[int, EventPayload]]:
    """Inside a write transaction: read and delete a session's inbox rows, oldest first."""
    waiting = read_inbox(connection, session_id)
    if waiting:
        connection.execute("DELETE FROM session_event_inbox WHERE session_id = ?", (session_id,))
    return waiting


def delete_inbox_rows(connection: Connection, ids: Sequence[int]) -> set[int]:
    """Inside a write transaction: delete these inbox rows; the ids that were still there."""
    present: set[int] = set()
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        rows = connection.execute(
            f"DELETE FROM session_event_inbox WHERE id IN ({marks}) RETURNING id",  # noqa: S608
            chunk,
        ).fetchall()
        present.update(int(row[0]) for row in rows)
    return present


def newest_inbox_ids(connection: Connection, session_ids: Sequence[str]) -> dict[str, int]:
    """The newest inbox row id of each of these sessions (those with rows waiting)."""
    newest: dict[str, int] = {}
    for start in range(0, len(session_ids), 500):
        chunk = list(session_ids[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        rows = connection.execute(
            "SELECT session_id, MAX(id) FROM session_event_inbox"  # noqa: S608
            f" WHERE session_id IN ({marks}) GROUP BY session_id",
            chunk,
        ).fetchall()
        newest.update((str(row[0]), int(row[1])) for row in rows)
    return newest
