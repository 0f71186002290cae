"""``list_sessions``: newest first, keyset-paged, filtered by workspace, status and text.

The text query is user input. It is never handed to FTS5 as syntax: it is split into words
and each word becomes a quoted FTS5 string (the last one a prefix match, for type-ahead), so
``"``, ``*``, ``NEAR``, ``-``, ``:``, parentheses and friends are just characters. The same
text also matches session titles with ``LIKE`` (its ``%``/``_`` escaped).
"""

from __future__ import annotations

import re
from typing import Any

from relavium_lsp.contracts.session import SessionStatus
from relavium_lsp.contracts.wire import MAX_PAGE
from relavium_lsp.store.db.connection import Connection
from relavium_lsp.store.models import (
    SUMMARY_COLUMNS,
    SessionPage,
    decode_cursor,
    encode_cursor,
    summary_from_row,
)

MAX_QUERY_WORDS = 16
_WORD = re.compile(r"\w+")


def fts_match_expression(text: str) -> str | None:
    """An FTS5 MATCH expression for user ``text`` (all words, last as prefix); ``None`` if empty."""
    words = _WORD.findall(text)[:MAX_QUERY_WORDS]
    if not words:
        return None
    quoted = ['"' + word.replace('"', '""') + '"' for word in words]
    quoted[-1] += "*"
    return " ".join(quoted)


def like_pattern(text: str) -> str:
    r"""A ``LIKE … ESCAPE '\\'`` pattern matching ``text`` anywhere, literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def list_sessions(
    connection: Connection,
    *,
    workspace: str | None = None,
    status: SessionStatus | None = None,
    query: str | None = None,
    limit: int = 50,
    cursor: str | None = None,
    deleted: bool = False,
) -> SessionPage:
    """One page of undeleted sessions, ``updated_at`` descending (ties by id descending).

    ``deleted``: the soft-deleted sessions instead (a delete stamps ``updated_at``, so the
    newest deletion comes first).
    """
    page_size = min(max(1, limit), MAX_PAGE)
    clauses = ["deleted_at IS NOT NULL" if deleted else "deleted_at IS NULL"]
    parameters: list[Any] = []
    if workspace is not None:
        clauses.append("working_dir = ?")
        parameters.append(workspace)
    if status is not None:
        clauses.append("status = ?")
        parameters.append(status)
    if cursor is not None:
        updated_at, session_id = decode_cursor(cursor)
        clauses.append("(updated_at, id) < (?, ?)")
        parameters.extend((updated_at, session_id))
    text = (query or "").strip()
    if text:
        match = fts_match_expression(text)
        if match is None:
            clauses.append("title LIKE ? ESCAPE '\\'")
            parameters.append(like_pattern(text))
        else:
            clauses.append(
                "(title LIKE ? ESCAPE '\\' OR id IN (SELECT session_id FROM session_messages_fts"
                " WHERE session_messages_fts MATCH ?))"
            )
            parameters.extend((like_pattern(text), match))
    parameters.append(page_size + 1)
    rows = connection.execute(
        f"SELECT {SUMMARY_COLUMNS} FROM agent_sessions WHERE {' AND '.join(clauses)}"  # noqa: S608
        " ORDER BY updated_at DESC, id DESC LIMIT ?",
        parameters,
    ).fetchall()
    sessions = [summary_from_row(row) for row in rows[:page_size]]
    next_cursor = None
    if len(rows) > page_size:
        last = sessions[-1]
        next_cursor = encode_cursor(last.updated_at, last.id)
    return SessionPage(sessions=sessions, next_cursor=next_cursor)
