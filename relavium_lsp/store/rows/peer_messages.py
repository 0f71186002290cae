"""Peer messages between sessions and their deliveries (migration 7, ``docs/design.md`` §2.5).

A message row is written once with a ``pending`` delivery per recipient; each delivery then
moves on (``delivered`` / ``replied`` / ``failed`` / ``aborted``) in its own transaction.
Rows name sessions without foreign keys; :func:`purge_rows` erases them with a purged family.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

from relavium_lsp.contracts.peers import DeliveryStatus, PeerMessage
from relavium_lsp.store.db.connection import Connection, write_transaction
from relavium_lsp.store.models import utc_timestamp

_MESSAGE_COLUMNS = "id, from_session_id, from_agent, text, mode, hops, call_id, created_at"
_DELIVERY_COLUMNS = "to_session_id, status, sequence_number, delivered_at, reply, error, updated_at"
Direction = Literal["sent", "received", "all"]


def create_message(connection: Connection, message: PeerMessage) -> None:
    """Store a message and a ``pending`` delivery for each recipient (one transaction)."""
    with write_transaction(connection):
        connection.execute(
            f"INSERT INTO peer_messages ({_MESSAGE_COLUMNS})"  # noqa: S608 - constant columns
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                message.id,
                message.from_session_id,
                message.from_agent,
                message.text,
                message.mode,
                message.hops,
                message.call_id,
                message.created_at,
            ),
        )
        connection.executemany(
            "INSERT INTO peer_deliveries (message_id, to_session_id, status, updated_at)"
            " VALUES (?, ?, ?, ?)",
            [
                (message.id, delivery.to_session_id, delivery.status, delivery.updated_at)
                for delivery in message.deliveries
            ],
        )


def update_delivery(
    connection: Connection,
    message_id: str,
    to_session_id: str,
    status: DeliveryStatus,
    *,
    sequence_number: int | None = None,
    reply: str | None = None,
    error: str | None = None,
) -> None:
    """Move one delivery on; a given sequence number marks the moment it was delivered."""
    now = utc_timestamp()
    with write_transaction(connection):
        connection.execute(
            "UPDATE peer_deliveries SET status = ?, updated_at = ?,"
            " sequence_number = COALESCE(?, sequence_number),"
            " delivered_at = CASE WHEN ? IS NULL THEN delivered_at ELSE ? END,"
            " reply = COALESCE(?, reply), error = COALESCE(?, error)"
            " WHERE message_id = ? AND to_session_id = ?",
            (
                status,
                now,
                sequence_number,
                sequence_number,
                now,
                reply,
                error,
                message_id,
                to_session_id,
            ),
        )


def pending_for(connection: Connection, to_session_id: str) -> list[PeerMessage]:
    """Fire-and-forget messages still waiting to be appended to a session, oldest first."""
    rows = connection.execute(
        f"SELECT {_MESSAGE_COLUMNS} FROM peer_messages"  # noqa: S608 - constant columns
        " WHERE mode = 'fire_and_forget' AND id IN (SELECT message_id FROM peer_deliveries"
        " WHERE to_session_id = ? AND status = 'pending') ORDER BY created_at, rowid",
        (to_session_id,),
    ).fetchall()
    return [_message(connection, row) for row in rows]


def get_message(connection: Connection, message_id: str) -> PeerMessage | None:
    """One message with its deliveries."""
    row = connection.execute(
        f"SELECT {_MESSAGE_COLUMNS} FROM peer_messages WHERE id = ?",  # noqa: S608
        (message_id,),
    ).fetchone()
    return None if row is None else _message(connection, row)


def list_messages(
    connection: Connection, session_id: str, direction: Direction = "all"
) -> list[PeerMessage]:
    """Messages a session sent and/or received, oldest first."""
    sent = direction in ("sent", "all")
    received = direction in ("received", "all")
    rows = connection.execute(
        f"SELECT {_MESSAGE_COLUMNS} FROM peer_messages"  # noqa: S608 - constant columns
        " WHERE (? AND from_session_id = ?) OR (? AND id IN"
        " (SELECT message_id FROM peer_deliveries WHERE to_session_id = ?))"
        " ORDER BY created_at, rowid",
        (int(sent), session_id, int(received), session_id),
    ).fetchall()
    return [_message(connection, row) for row in rows]


def newest_session_of_agent(
    connection: Connection, working_dir: str, agent_slug: str, *, besides: str
) -> str | None:
    """The most recently active session of an agent in a workspace (not ended or deleted)."""
    wanted = os.path.realpath(working_dir)
    rows = connection.execute(
        "SELECT id, working_dir FROM agent_sessions WHERE agent_slug = ? AND id != ?"
        " AND deleted_at IS NULL AND status != 'ended' ORDER BY updated_at DESC, id DESC"
        " LIMIT 200",
        (agent_slug, besides),
    ).fetchall()
    for session_id, directory in rows:
        if os.path.realpath(str(directory)) == wanted:
            return str(session_id)
    return None


def purge_rows(connection: Connection, family: Sequence[str]) -> None:
    """Erase what purged sessions sent and what was delivered to them (inside the purge)."""
    marks = ", ".join("?" * len(family))
    connection.execute(
        f"DELETE FROM peer_deliveries WHERE to_session_id IN ({marks})"  # noqa: S608
        f" OR message_id IN (SELECT id FROM peer_messages WHERE from_session_id IN ({marks}))",
        [*family, *family],
    )
    connection.execute(
        f"DELETE FROM peer_messages WHERE from_session_id IN ({marks})",  # noqa: S608
        list(family),
    )


def _message(connection: Connection, row: tuple[object, ...]) -> PeerMessage:
    names = [name.strip() for name in _MESSAGE_COLUMNS.split(",")]
    values = dict(zip(names, row, strict=True))
    deliveries = connection.execute(
        f"SELECT {_DELIVERY_COLUMNS} FROM peer_deliveries"  # noqa: S608
        " WHERE message_id = ? ORDER BY to_session_id",
        (values["id"],),
    ).fetchall()
    delivery_names = [name.strip() for name in _DELIVERY_COLUMNS.split(",")]
    return PeerMessage.model_validate(
        {
            **values,
            "deliveries": [dict(zip(delivery_names, d, strict=True)) for d in deliveries],
        }
    )
