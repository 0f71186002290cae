"""Message queries: append-only writes, rollback flags, and bounded reads.

Functions take the connection explicitly; :class:`~relavium_lsp.store.sessions.SessionStore`
is the public face. Every read walks the ``(session_id, sequence_number)`` index from a known
point in small batches, so its cost follows the size of the answer, not of the history.

:class:`DecodedMessages` keeps the messages decoded from their rows for the next turn. Every
turn loads the tail of its history that fits the model's context budget, and with a
large window that is the whole recent conversation, decoded again each time: JSON, then
pydantic validation of every part. The rows barely change between two turns, so the store
keeps what it decoded, keyed by the *whole row*: a row that differs in any column (another
window's edit, a repaired file) is a different key and is decoded afresh, so nothing stale
is ever returned. Rolled-back rows are never selected, so they simply age out.

Bounded by the rows' text size (least recently used first out); one store (one connection,
one worker thread) owns one cache. Messages are append-only records that no reader edits,
which is what makes handing the same object to two readers safe.
"""

from __future__ import annotations

import json
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

from relavium_lsp.contracts.base import compact_json
from relavium_lsp.contracts.content import (
    DurableContentPart,
    estimate_tokens,
    plain_text,
)
from relavium_lsp.contracts.session import (
    AGENT_AUTHORED_ROLES,
    CompactionMarker,
    InterruptionMarker,
    MessageRole,
    SessionMessage,
)
from relavium_lsp.contracts.usage import TokenUsage
from relavium_lsp.errors import SessionNotFound
from relavium_lsp.store.db.connection import Connection, read_snapshot, write_transaction
from relavium_lsp.store.models import (
    MESSAGE_COLUMNS,
    durable_content,
    json_column,
    message_from_row,
    preview_of,
    utc_timestamp,
)
from relavium_lsp.store.rows import marker_views
from relavium_lsp.store.rows.tail_walk import (
    TailWalk,
    WalkedRow,
    Walker,
    choose,
    drop_orphan_tool_results,
)

WALK_BATCH = 32
ITER_BATCH = 256
_PREVIEW_WALK_LIMIT = 256
_TOOL_CALL_WALK_LIMIT = 256
_NO_UPPER_BOUND = 2**62
# Column names are constants, never input: interpolating them is not an injection vector.
_SELECT_MESSAGES = f"SELECT {MESSAGE_COLUMNS} FROM session_messages"  # noqa: S608
# Positions in a MESSAGE_COLUMNS row that the budget walk reads before building a model.
_SEQUENCE = 2
_COMPACTION = 6
_TOKENS = 9


def require_session(connection: Connection, session_id: str) -> None:
    """Raise :class:`SessionNotFound` unless an undeleted session has this id."""
    row = connection.execute(
        "SELECT 1 FROM agent_sessions WHERE id = ? AND deleted_at IS NULL", (session_id,)
    ).fetchone()
    if row is None:
        raise SessionNotFound(f"no session with id {session_id!r}")


def session_agent(connection: Connection, session_id: str) -> str | None:
    """The agent a session runs (``None`` for an unknown id)."""
    row = connection.execute(
        "SELECT agent_slug FROM agent_sessions WHERE id = ?", (session_id,)
    ).fetchone()
    return None if row is None else str(row[0])


def append_message(
    connection: Connection,
    session_id: str,
    role: MessageRole,
    content: Sequence[DurableContentPart],
    *,
    model_id: str | None = None,
    compaction: CompactionMarker | None = None,
    interruption: InterruptionMarker | None = None,
    token_usage: TokenUsage | None = None,
    cost_microcents: int | None = None,
    parent_message_id: str | None = None,
    agent_slug: str | None = None,
    decode: Callable[[Sequence[Any]], SessionMessage] = message_from_row,
) -> SessionMessage:
    """Append one message, taking the next sequence number inside ``BEGIN IMMEDIATE``.

    Without ``parent_message_id`` the message threads onto the newest visible message (what
    it follows in the conversation); the turn names the parent of a tool result explicitly.
    An assistant message or tool result without ``agent_slug`` is the session's agent's: every
    message but a system row has exactly one author (migration 15's ``CHECK``). ``decode``
    reads the earlier view marker a new one may extend (``store/rows/marker_views.py``).
    """
    parts, content_json = durable_content(content)
    text = plain_text(parts)
    # A view marker stored as an extension still counts its whole view (marker_views.py).
    tokens = estimate_tokens(parts)
    preview = preview_of(parts) if role in ("user", "assistant") else None
    message_id = str(uuid.uuid4())
    now = utc_timestamp()
    compaction_json = None if compaction is None else _marker_json(compaction)
    interruption_json = None if interruption is None else _marker_json(interruption)
    with write_transaction(connection):
        require_session(connection, session_id)
        if compaction is not None and compaction.view is not None:
            column, own = marker_views.stored_form(
                connection, session_id, compaction, parts, decode
            )
            compaction_json = compact_json(column)
            own_parts, content_json = durable_content(own)
            text = plain_text(own_parts)
        if role in AGENT_AUTHORED_ROLES and agent_slug is None:
            agent_slug = session_agent(connection, session_id)
        sequence = connection.execute(
            "SELECT COALESCE(MAX(sequence_number), 0) + 1 FROM session_messages"
            " WHERE session_id = ?",
            (session_id,),
        ).fetchone()[0]
        ordinal, cumulative, newest_id = _newest_visible_totals(connection, session_id)
        parent = parent_message_id if parent_message_id is not None else newest_id
        rowid = connection.execute(
            "INSERT INTO session_messages (id, session_id, sequence_number, role, content,"
            " model_id, compaction, interruption, plain_text, token_estimate, visible_ordinal,"
            " cumulative_tokens, timestamp, token_usage, cost_microcents, parent_message_id,"
            " agent_slug) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " RETURNING message_rowid",
            (
                message_id,
                session_id,
                sequence,
                role,
                content_json,
                model_id,
                compaction_json,
                interruption_json,
                text,
                tokens,
                ordinal + 1,
                cumulative + tokens,
                now,
                json_column(token_usage),
                cost_microcents,
                parent,
                agent_slug,
            ),
        ).fetchone()[0]
        connection.execute(
            "INSERT INTO session_messages_fts (rowid, plain_text, session_id) VALUES (?, ?, ?)",
            (rowid, text, session_id),
        )
        connection.execute(
            "UPDATE agent_sessions SET message_count = ?, updated_at = ?,"
            " last_message_preview = COALESCE(?, last_message_preview) WHERE id = ?",
            (ordinal + 1, now, preview, session_id),
        )
    return SessionMessage(
        id=message_id,
        session_id=session_id,
        sequence_number=sequence,
        role=role,
        content=parts,
        model_id=model_id,
        compaction=compaction,
        interruption=interruption,
        timestamp=now,
        token_usage=token_usage,
        cost_microcents=cost_microcents,
        parent_message_id=parent,
        agent_slug=agent_slug,
    )


def roll_back_from(connection: Connection, session_id: str, from_sequence: int) -> int:
    """Hide every visible message with ``sequence_number >= from_sequence``; returns how many."""
    with write_transaction(connection):
        require_session(connection, session_id)
        hidden = connection.execute(
            "UPDATE session_messages SET rolled_back = 1 WHERE session_id = ?"
            " AND sequence_number >= ? AND rolled_back = 0 RETURNING message_rowid, plain_text",
            (session_id, from_sequence),
        ).fetchall()
        if not hidden:
            return 0
        connection.executemany(
            "INSERT INTO session_messages_fts (session_messages_fts, rowid, plain_text,"
            " session_id) VALUES ('delete', ?, ?, ?)",
            [(rowid, text, session_id) for rowid, text in hidden],
        )
        ordinal, _, _ = _newest_visible_totals(connection, session_id)
        connection.execute(
            "UPDATE agent_sessions SET message_count = ?, last_message_preview = ?,"
            " updated_at = ? WHERE id = ?",
            (ordinal, _newest_preview(connection, session_id), utc_timestamp(), session_id),
        )
    return len(hidden)


def load_tail_within_budget(
    connection: Connection,
    session_id: str,
    token_budget: int,
    decode: Callable[[Sequence[Any]], SessionMessage] = message_from_row,
) -> list[SessionMessage]:
    """The newest visible messages whose estimates fit ``token_budget``, in model order.

    Always includes the newest message. The newest compaction marker is a boundary: nothing
    at or before its ``droppedThroughSequence`` is loaded, older markers are superseded, and
    the marker itself comes first (it stands for everything before it) when it fits. Never
    starts with a tool result whose call was cut off; when the newest message is itself such
    a tool result, the walk extends back to its call (over budget) rather than hand a
    provider an orphan result.
    """
    with read_snapshot(connection):
        walker = Walker(token_budget)
        _walk(connection, session_id, walker, decode)
        marker, tail, kept = choose(walker.rows, token_budget)
        if not kept and tail:
            kept = _extend_to_tool_call(connection, session_id, tail)
    return kept if marker is None else [marker, *kept]


def walk_tail(
    connection: Connection,
    session_id: str,
    token_budget: int,
    decode: Callable[[Sequence[Any]], SessionMessage] = message_from_row,
    known: TailWalk | None = None,
) -> TailWalk:
    """The rows the tail rule visits for ``token_budget`` (``store/rows/tail_walk.py``).

    With ``known`` (this connection's previous walk, still valid: see :class:`TailWalk`)
    only the rows newer than it are read, when its newest row is still visible.
    """
    with read_snapshot(connection):
        if known is not None and known.rows and _visible(connection, session_id, known.rows[0]):
            walker = Walker(token_budget)
            _walk(connection, session_id, walker, decode, after=known.rows[0].sequence)
            if walker.stop != "end" or walker.continue_over(known):
                return walker.known(0)
        walker = Walker(token_budget)
        _walk(connection, session_id, walker, decode)
        return walker.known(0)


def _boundary(compaction: str) -> int:
    return int(json.loads(compaction)["droppedThroughSequence"])


def _visible(connection: Connection, session_id: str, row: WalkedRow) -> bool:
    found = connection.execute(
        "SELECT 1 FROM session_messages WHERE session_id = ? AND sequence_number = ?"
        " AND rolled_back = 0",
        (session_id, row.sequence),
    ).fetchone()
    return found is not None


def _walk(
    connection: Connection,
    session_id: str,
    walker: Walker,
    decode: Callable[[Sequence[Any]], SessionMessage],
    *,
    after: int = 0,
) -> None:
    """Walk back over the visible rows newer than ``after`` until the rule stops."""
    for row in _walk_back(connection, session_id, above=after):
        if not walker.fits(row[_SEQUENCE], row[_TOKENS]):
            return
        compaction = row[_COMPACTION]
        walker.take(
            row[_SEQUENCE],
            row[_TOKENS],
            partial(marker_views.resolve, connection, row, decode),
            None if compaction is None else partial(_boundary, compaction),
        )


def get_transcript(
    connection: Connection,
    session_id: str,
    *,
    before_sequence: int | None,
    limit: int,
    agent_slug: str | None = None,
) -> tuple[list[SessionMessage], bool]:
    """A page of visible messages older than ``before_sequence``, oldest first, and has_more.

    ``agent_slug`` keeps only the messages that agent wrote (seed 004: a transcript by agent).
    """
    bound = _NO_UPPER_BOUND if before_sequence is None else before_sequence
    page_size = max(1, limit)
    agent_clause = "" if agent_slug is None else " AND agent_slug = ?"
    agent_args: tuple[str, ...] = () if agent_slug is None else (agent_slug,)
    rows = connection.execute(
        _SELECT_MESSAGES + " WHERE session_id = ?"
        " AND sequence_number < ? AND rolled_back = 0" + agent_clause + " ORDER BY"
        " sequence_number DESC LIMIT ?",
        (session_id, bound, *agent_args, page_size + 1),
    ).fetchall()
    has_more = len(rows) > page_size
    page = [marker_views.resolve(connection, row, message_from_row) for row in rows[:page_size]]
    return page[::-1], has_more


def iter_messages(connection: Connection, session_id: str) -> Iterator[SessionMessage]:
    """Every visible message in order, fetched in batches (for export)."""
    after = 0
    # The newest view marker read, whole: the next one most likely extends it.
    known: dict[int, SessionMessage] = {}
    while True:
        rows = connection.execute(
            _SELECT_MESSAGES + " WHERE session_id = ?"
            " AND sequence_number > ? AND rolled_back = 0 ORDER BY sequence_number LIMIT ?",
            (session_id, after, ITER_BATCH),
        ).fetchall()
        for row in rows:
            message = marker_views.resolve(connection, row, message_from_row, known)
            if message.compaction is not None and message.compaction.view is not None:
                known = {message.sequence_number: message}
            yield message
        if len(rows) < ITER_BATCH:
            return
        after = rows[-1][2]


def last_message(connection: Connection, session_id: str) -> SessionMessage | None:
    """The newest visible message, if any."""
    row = connection.execute(
        _SELECT_MESSAGES + " WHERE session_id = ?"
        " AND rolled_back = 0 ORDER BY sequence_number DESC LIMIT 1",
        (session_id,),
    ).fetchone()
    return None if row is None else marker_views.resolve(connection, row, message_from_row)


def count_tokens_since_boundary(connection: Connection, session_id: str) -> tuple[int, int]:
    """(visible messages after the newest compaction marker, their estimated tokens) — O(1).

    The tokens count the marker itself too (its summary, or the view compaction inside a turn
    stored in it): the model sees it with the messages after it.
    """
    with read_snapshot(connection):
        newest = _newest_visible_totals(connection, session_id)
        marker = connection.execute(
            "SELECT visible_ordinal, cumulative_tokens - token_estimate FROM session_messages"
            " WHERE session_id = ? AND compaction IS NOT NULL AND rolled_back = 0"
            " ORDER BY sequence_number DESC LIMIT 1",
            (session_id,),
        ).fetchone()
    if marker is None:
        return newest[0], newest[1]
    return newest[0] - marker[0], newest[1] - marker[1]


def newest_marker_holds_view(connection: Connection, session_id: str) -> bool:
    """Whether the newest visible compaction marker holds a view (written inside a turn)."""
    row = connection.execute(
        "SELECT compaction FROM session_messages"
        " WHERE session_id = ? AND compaction IS NOT NULL AND rolled_back = 0"
        " ORDER BY sequence_number DESC LIMIT 1",
        (session_id,),
    ).fetchone()
    return row is not None and json.loads(row[0]).get("view") is not None


def _walk_back(
    connection: Connection, session_id: str, before: int = _NO_UPPER_BOUND, above: int = 0
) -> Iterator[Any]:
    while True:
        rows = connection.execute(
            _SELECT_MESSAGES + " WHERE session_id = ? AND sequence_number < ?"
            " AND sequence_number > ? AND rolled_back = 0 ORDER BY sequence_number DESC LIMIT ?",
            (session_id, before, above, WALK_BATCH),
        ).fetchall()
        yield from rows
        if len(rows) < WALK_BATCH:
            return
        before = rows[-1][2]


def _marker_json(marker: CompactionMarker | InterruptionMarker) -> str:
    return compact_json(marker.model_dump(mode="json", by_alias=True))


def _newest_visible_totals(connection: Connection, session_id: str) -> tuple[int, int, str | None]:
    row = connection.execute(
        "SELECT visible_ordinal, cumulative_tokens, id FROM session_messages"
        " WHERE session_id = ? AND rolled_back = 0 ORDER BY sequence_number DESC LIMIT 1",
        (session_id,),
    ).fetchone()
    return (0, 0, None) if row is None else (int(row[0]), int(row[1]), str(row[2]))


def _newest_preview(connection: Connection, session_id: str) -> str | None:
    scanned = 0
    for row in _walk_back(connection, session_id):
        scanned += 1
        if scanned > _PREVIEW_WALK_LIMIT:
            return None
        if row[3] in ("user", "assistant"):
            preview = preview_of(message_from_row(row).content)
            if preview is not None:
                return preview
    return None


def _extend_to_tool_call(
    connection: Connection, session_id: str, tail: list[SessionMessage]
) -> list[SessionMessage]:
    extended = list(tail)
    for steps, row in enumerate(_walk_back(connection, session_id, tail[0].sequence_number)):
        message = marker_views.resolve(connection, row, message_from_row)
        extended.insert(0, message)
        if message.role != "tool" or message.compaction is not None:
            break
        if steps >= _TOOL_CALL_WALK_LIMIT:
            break
    result = drop_orphan_tool_results(extended)
    if result and result[-1].sequence_number == tail[-1].sequence_number:
        return result
    # Nothing older pairs it (a corrupt or foreign history): the newest message, as is.
    return tail[-1:]


DEFAULT_MAX_BYTES = 4 * 1024 * 1024


def _text_bytes(row: tuple[Any, ...]) -> int:
    return sum(len(value) for value in row if isinstance(value, str))


class DecodedMessages:
    """A bounded cache of messages by their full row."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._entries: OrderedDict[tuple[Any, ...], SessionMessage] = OrderedDict()
        self._bytes = 0
        self._max_bytes = max_bytes

    def decode(self, row: Sequence[Any]) -> SessionMessage:
        """The message of ``row`` (a :data:`~relavium_lsp.store.models.MESSAGE_COLUMNS` row)."""
        key = tuple(row)
        cached = self._entries.get(key)
        if cached is not None:
            self._entries.move_to_end(key)
            return cached
        message = message_from_row(key)
        size = _text_bytes(key)
        if size <= self._max_bytes // 8:  # one huge message must not push out all the others
            self._entries[key] = message
            self._bytes += size
            while self._bytes > self._max_bytes:
                evicted, _ = self._entries.popitem(last=False)
                self._bytes -= _text_bytes(evicted)
        return message

    def __len__(self) -> int:
        return len(self._entries)
