"""Replay audit rows and stored tool cassettes (migration 16, ``docs/design.md`` §9).

Every replay of a session writes one ``session_replays`` row when it starts (``running``) and
completes it when it ends (``matched``, ``differed`` or ``stopped``, with its counts). A
session's tool cassette — the ``relavium-tool-cassette/1.0`` text its newest JSONL export
wrote — is kept in ``session_tool_cassettes``, encrypted like the rest of the history, for a
later replay to read back. Tool timings come from the event log's ``agent:tool_result``
events.
"""

from __future__ import annotations

from relavium_lsp.contracts.replay import ReplayAuditRecord, ReplayStatus
from relavium_lsp.store.db.connection import Connection, write_transaction

_COLUMNS = (
    "id, session_id, replay_session_id, mode, status, turns_replayed, differences,"
    " live_tool_calls, recorded_tool_calls, cassette, detail, created_at, finished_at"
)
_NAMES = [name.strip() for name in _COLUMNS.split(",")]


def insert_replay(connection: Connection, record: ReplayAuditRecord) -> None:
    """Write a replay's audit row (as it starts)."""
    with write_transaction(connection):
        connection.execute(
            f"INSERT INTO session_replays ({_COLUMNS})"  # noqa: S608 - constant columns
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            tuple(getattr(record, name) for name in _NAMES),
        )


def finish_replay(
    connection: Connection,
    replay_id: str,
    *,
    status: ReplayStatus,
    turns_replayed: int,
    differences: int,
    live_tool_calls: int,
    recorded_tool_calls: int,
    detail: str,
    finished_at: str,
) -> None:
    """Complete a replay's audit row with how it went."""
    with write_transaction(connection):
        connection.execute(
            "UPDATE session_replays SET status = ?, turns_replayed = ?, differences = ?,"
            " live_tool_calls = ?, recorded_tool_calls = ?, detail = ?, finished_at = ?"
            " WHERE id = ?",
            (
                status,
                turns_replayed,
                differences,
                live_tool_calls,
                recorded_tool_calls,
                detail,
                finished_at,
                replay_id,
            ),
        )


def list_replays(connection: Connection, session_id: str) -> list[ReplayAuditRecord]:
    """The replays of a session, and the one that made it if it is a replay, oldest first."""
    rows = connection.execute(
        f"SELECT {_COLUMNS} FROM session_replays"  # noqa: S608 - constant columns
        " WHERE session_id = ? OR replay_session_id = ? ORDER BY created_at, rowid",
        (session_id, session_id),
    ).fetchall()
    return [ReplayAuditRecord.model_validate(dict(zip(_NAMES, row, strict=True))) for row in rows]


def save_tool_cassette(
    connection: Connection, session_id: str, content: str, calls: int, written_at: str
) -> None:
    """Keep a session's tool cassette (the newest export's replaces the one before)."""
    with write_transaction(connection):
        connection.execute(
            "INSERT INTO session_tool_cassettes (session_id, content, calls, written_at)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET"
            " content = excluded.content, calls = excluded.calls,"
            " written_at = excluded.written_at",
            (session_id, content, calls, written_at),
        )


def load_tool_cassette(connection: Connection, session_id: str) -> str | None:
    """The tool cassette stored for a session, if an export wrote one."""
    row = connection.execute(
        "SELECT content FROM session_tool_cassettes WHERE session_id = ?", (session_id,)
    ).fetchone()
    return None if row is None else str(row[0])


def tool_durations(connection: Connection, session_id: str) -> dict[str, int]:
    """How long each tool call took, by call id (its ``agent:tool_result`` event)."""
    rows = connection.execute(
        "SELECT json_extract(payload, '$.callId'), json_extract(payload, '$.durationMs')"
        " FROM session_events WHERE session_id = ? AND type = 'agent:tool_result'"
        " ORDER BY sequence_number",
        (session_id,),
    ).fetchall()
    return {str(call): int(ms) for call, ms in rows if call is not None and ms is not None}
