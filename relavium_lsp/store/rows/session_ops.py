"""Whole-session operations beyond soft delete: restore, purge, and the artifact list (§2.5).

Purge is the only place anything is erased. It removes a session and its delegated children
(everything nested under it through ``parent_session_id``) in one ``BEGIN IMMEDIATE``
transaction: FTS rows first (the index is external-content, so its entries are deleted with
the values they were indexed with), then peer messages, messages, costs, events, artifacts,
handoffs and the rows. It returns the media handles no remaining message refers to; the
caller deletes those files after the commit (a crash in between leaves an unreferenced blob,
never a dangling handle).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from relavium_lsp.contracts.session_ops import ArtifactInfo
from relavium_lsp.errors import SessionNotFound
from relavium_lsp.store.db.connection import Connection, read_snapshot, write_transaction
from relavium_lsp.store.rows import peer_messages

_MEDIA_HANDLE = re.compile(r"media://sha256-[0-9a-f]{64}")
# The session and every session nested under it (delegated children, their children, …).
_FAMILY = (
    "WITH RECURSIVE family(id) AS (SELECT ? UNION"
    " SELECT agent_sessions.id FROM agent_sessions JOIN family"
    " ON agent_sessions.parent_session_id = family.id) SELECT id FROM family"
)
# The FTS index is external-content: its entries are deleted with the values they were
# indexed with (only visible rows are indexed). Only placeholders are ever substituted in.
_UNINDEX = (
    "INSERT INTO session_messages_fts (session_messages_fts, rowid, plain_text, session_id)"
    " SELECT 'delete', message_rowid, plain_text, session_id FROM session_messages"
    " WHERE session_id IN (?) AND rolled_back = 0"
)
_TABLES_BY_SESSION = (
    "session_leases",
    "session_messages",
    "session_costs",
    "session_events",
    "session_event_inbox",
    "session_event_floor",
    "session_artifacts",
    "session_handoffs",
    "session_handoff_audit",
    "workspace_memory_proposals",
    "session_replays",
    "session_tool_cassettes",
)


@dataclass(frozen=True)
class PurgeReport:
    """What a purge erased, and the media blobs nothing refers to any more."""

    sessions: int
    messages: int
    orphaned_media: list[str]


# Settled statuses: nothing runs or waits, so an untouched session may become inactive.
_SETTLED = ("idle", "ended", "failed")


def mark_inactive(connection: Connection, touched_before: str) -> list[str]:
    """Mark settled sessions untouched since ``touched_before`` inactive; returns their ids.

    ``updated_at`` is left as it was: it still says when the session was last touched. The
    write lock is taken only when there is something to mark (this runs on every listing);
    the update checks the conditions again, so a session touched meanwhile stays as it is.
    """
    condition = "deleted_at IS NULL AND updated_at < ? AND status IN (?, ?, ?)"
    arguments = (touched_before, *_SETTLED)
    found = [
        str(row[0])
        for row in connection.execute(
            f"SELECT id FROM agent_sessions WHERE {condition}",  # noqa: S608 - constant
            arguments,
        )
    ]
    if not found:
        return []
    with write_transaction(connection):
        marked = [
            session_id
            for session_id in found
            if connection.execute(
                f"UPDATE agent_sessions SET status = 'inactive' WHERE id = ? AND {condition}",  # noqa: S608
                (session_id, *arguments),
            ).rowcount
        ]
    return marked


def restore_session(connection: Connection, session_id: str) -> None:
    """Undo a soft delete; :class:`SessionNotFound` unless a deleted session has this id."""
    with write_transaction(connection):
        cursor = connection.execute(
            "UPDATE agent_sessions SET deleted_at = NULL WHERE id = ? AND deleted_at IS NOT NULL",
            (session_id,),
        )
        if cursor.rowcount == 0:
            raise SessionNotFound(f"no deleted session with id {session_id!r}")
        # Other windows' lists follow the change log (§3.1): to them it is a new session.
        connection.execute(
            "INSERT INTO session_changes (session_id, kind) VALUES (?, 'created')", (session_id,)
        )


def purge_session(connection: Connection, session_id: str) -> PurgeReport:
    """Erase a session (deleted or not) and its children for good."""
    with write_transaction(connection):
        exists = connection.execute(
            "SELECT 1 FROM agent_sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if exists is None:
            raise SessionNotFound(f"no session with id {session_id!r}")
        family = [str(row[0]) for row in connection.execute(_FAMILY, (session_id,))]
        marks = ", ".join("?" * len(family))
        handles: set[str] = set()
        for (content,) in connection.execute(
            f"SELECT content FROM session_messages WHERE session_id IN ({marks})",  # noqa: S608
            family,
        ):
            handles.update(_MEDIA_HANDLE.findall(str(content)))
        connection.execute(_UNINDEX.replace("?", marks, 1), family)
        messages = connection.execute(
            f"SELECT COUNT(*) FROM session_messages WHERE session_id IN ({marks})",  # noqa: S608
            family,
        ).fetchone()[0]
        peer_messages.purge_rows(connection, family)
        for table in _TABLES_BY_SESSION:
            connection.execute(
                f"DELETE FROM {table} WHERE session_id IN ({marks})",  # noqa: S608 - constants
                family,
            )
        connection.execute(
            f"DELETE FROM agent_sessions WHERE id IN ({marks})",  # noqa: S608
            family,
        )
        # Other windows' lists follow the change log (§3.1): gone, as after a delete.
        connection.executemany(
            "INSERT INTO session_changes (session_id, kind) VALUES (?, 'deleted')",
            [(member,) for member in family],
        )
        orphaned = [
            handle
            for handle in sorted(handles)
            if connection.execute(
                "SELECT 1 FROM session_messages WHERE instr(content, ?) > 0 LIMIT 1", (handle,)
            ).fetchone()
            is None
        ]
    return PurgeReport(sessions=len(family), messages=int(messages), orphaned_media=orphaned)


def list_artifacts(connection: Connection, session_id: str) -> list[ArtifactInfo]:
    """The stored full tool outputs of a session, oldest first, with the tool that made each."""
    with read_snapshot(connection):
        rows = connection.execute(
            "SELECT id, call_id, created_at, length(text),"
            " length(text) - length(replace(text, char(10), '')) + 1"
            " FROM session_artifacts WHERE session_id = ? ORDER BY created_at, rowid",
            (session_id,),
        ).fetchall()
        names = _tool_names(connection, session_id, {str(row[1]) for row in rows})
    return [
        ArtifactInfo(
            id=row[0],
            call_id=row[1],
            tool_name=names.get(str(row[1])),
            created_at=row[2],
            chars=row[3],
            lines=row[4],
        )
        for row in rows
    ]


def _tool_names(connection: Connection, session_id: str, call_ids: set[str]) -> dict[str, str]:
    """Tool name by call id, read from the assistant messages that made the calls."""
    if not call_ids:
        return {}
    found: dict[str, str] = {}
    rows = connection.execute(
        "SELECT json_extract(part.value, '$.id'), json_extract(part.value, '$.name')"
        " FROM session_messages, json_each(session_messages.content) AS part"
        " WHERE session_id = ? AND role = 'assistant'"
        " AND json_extract(part.value, '$.type') = 'tool_call'",
        (session_id,),
    )
    for call_id, name in rows:
        if call_id in call_ids and name is not None:
            found[str(call_id)] = str(name)
    return found
