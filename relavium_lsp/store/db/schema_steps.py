"""The schema changes, one function per migration (listed and applied by ``db/migrations.py``).

Each function runs inside the migration transaction. Never edit one that has been released;
append a new one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from relavium_lsp.errors import StoreError
from relavium_lsp.store.db.connection import Connection


def create_initial_schema(connection: Connection) -> None:
    """Version 1: sessions, messages, costs, events and their indexes."""
    for statement in _INITIAL_STATEMENTS:
        connection.execute(statement)


# session_messages.message_rowid is an explicit INTEGER PRIMARY KEY because the FTS table
# uses it as its content rowid, and implicit rowids may be renumbered by VACUUM. The FTS
# index is an external-content index over the *visible* messages (a view), so it stores no
# second copy of the text, and FTS5's 'integrity-check' / 'rebuild' agree with what the
# repository keeps indexed (rolled-back rows are not searchable).
# visible_ordinal / cumulative_tokens are running totals over *visible* messages, so
# "how much since the last compaction marker" is a subtraction, not a scan of history.
_INITIAL_STATEMENTS = (
    """
    CREATE TABLE agent_sessions (
        id TEXT PRIMARY KEY,
        agent_slug TEXT NOT NULL,
        agent_snapshot TEXT NOT NULL,
        title TEXT,
        model_id TEXT,
        context TEXT NOT NULL,
        working_dir TEXT NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('idle', 'streaming', 'awaiting_approval', 'ended')),
        source TEXT NOT NULL,
        total_input_tokens INTEGER NOT NULL DEFAULT 0,
        total_output_tokens INTEGER NOT NULL DEFAULT 0,
        total_cost_microcents INTEGER NOT NULL DEFAULT 0,
        message_count INTEGER NOT NULL DEFAULT 0,
        turn_count INTEGER NOT NULL DEFAULT 0,
        last_message_preview TEXT,
        exported_workflow_path TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        deleted_at TEXT
    )
    """,
    """
    CREATE INDEX agent_sessions_recent
        ON agent_sessions (updated_at DESC, id DESC) WHERE deleted_at IS NULL
    """,
    """
    CREATE INDEX agent_sessions_workspace_recent
        ON agent_sessions (working_dir, updated_at DESC, id DESC) WHERE deleted_at IS NULL
    """,
    """
    CREATE INDEX agent_sessions_status_recent
        ON agent_sessions (status, updated_at DESC, id DESC) WHERE deleted_at IS NULL
    """,
    """
    CREATE TABLE session_messages (
        message_rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        sequence_number INTEGER NOT NULL CHECK (sequence_number >= 1),
        role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
        content TEXT NOT NULL,
        model_id TEXT,
        compaction TEXT,
        interruption TEXT,
        plain_text TEXT NOT NULL,
        token_estimate INTEGER NOT NULL,
        visible_ordinal INTEGER NOT NULL,
        cumulative_tokens INTEGER NOT NULL,
        rolled_back INTEGER NOT NULL DEFAULT 0 CHECK (rolled_back IN (0, 1)),
        timestamp TEXT NOT NULL,
        UNIQUE (session_id, sequence_number)
    )
    """,
    """
    CREATE INDEX session_messages_compaction
        ON session_messages (session_id, sequence_number)
        WHERE compaction IS NOT NULL AND rolled_back = 0
    """,
    """
    CREATE VIEW session_messages_visible AS
        SELECT message_rowid, plain_text, session_id FROM session_messages WHERE rolled_back = 0
    """,
    """
    CREATE VIRTUAL TABLE session_messages_fts USING fts5 (
        plain_text,
        session_id UNINDEXED,
        content = 'session_messages_visible',
        content_rowid = 'message_rowid',
        tokenize = 'unicode61 remove_diacritics 2'
    )
    """,
    """
    CREATE TABLE session_costs (
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        model TEXT NOT NULL,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cost_microcents INTEGER NOT NULL DEFAULT 0,
        call_count INTEGER NOT NULL DEFAULT 0,
        unpriced_calls INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (session_id, model)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE session_events (
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        sequence_number INTEGER NOT NULL CHECK (sequence_number >= 1),
        type TEXT NOT NULL,
        timestamp TEXT NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (session_id, sequence_number)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE session_artifacts (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        call_id TEXT NOT NULL,
        text TEXT NOT NULL,
        created_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX session_artifacts_session ON session_artifacts (session_id, call_id)",
)


def add_cache_token_columns(connection: Connection) -> None:
    """Version 2: prompt-cache token counts in ``session_costs``."""
    # Prompt-cache reads and writes are billed at their own rates; keep them per model so
    # a session's spend can be explained. They are parts of input_tokens, not additions.
    for column in ("cache_read_tokens", "cache_write_tokens"):
        connection.execute(
            f"ALTER TABLE session_costs ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0"
        )


def add_session_model(connection: Connection) -> None:
    """Version 5: usage, threading, lineage, statuses and handoffs."""
    # New statuses need a new CHECK, and SQLite changes a CHECK only by rebuilding the table
    # (its documented procedure: create, copy, drop, rename; foreign keys are off while
    # migrating and checked before the commit, see migrate()).
    connection.execute(
        """
        CREATE TABLE agent_sessions_v5 (
            id TEXT PRIMARY KEY,
            agent_slug TEXT NOT NULL,
            agent_snapshot TEXT NOT NULL,
            title TEXT,
            model_id TEXT,
            context TEXT NOT NULL,
            working_dir TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('idle', 'streaming', 'awaiting_approval',
                'awaiting_peer', 'failed', 'ended')),
            source TEXT NOT NULL,
            total_input_tokens INTEGER NOT NULL DEFAULT 0,
            total_output_tokens INTEGER NOT NULL DEFAULT 0,
            total_cost_microcents INTEGER NOT NULL DEFAULT 0,
            message_count INTEGER NOT NULL DEFAULT 0,
            turn_count INTEGER NOT NULL DEFAULT 0,
            last_message_preview TEXT,
            exported_workflow_path TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            deleted_at TEXT,
            description TEXT,
            description_source TEXT,
            metadata TEXT,
            forked_from TEXT,
            parent_session_id TEXT
        )
        """
    )
    old_columns = (
        "id, agent_slug, agent_snapshot, title, model_id, context, working_dir, status, source,"
        " total_input_tokens, total_output_tokens, total_cost_microcents, message_count,"
        " turn_count, last_message_preview, exported_workflow_path, created_at, updated_at,"
        " deleted_at"
    )
    connection.execute(
        f"INSERT INTO agent_sessions_v5 ({old_columns})"  # noqa: S608 - constant column names
        f" SELECT {old_columns} FROM agent_sessions"
    )
    # Dropping the table drops its triggers (the change log's, migration 3) and indexes:
    # keep their SQL and create them again on the new table, whatever earlier steps made.
    kept = [
        str(row[0])
        for row in connection.execute(
            "SELECT sql FROM sqlite_master WHERE tbl_name = 'agent_sessions'"
            " AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY type, name"
        )
    ]
    connection.execute("DROP TABLE agent_sessions")
    connection.execute("ALTER TABLE agent_sessions_v5 RENAME TO agent_sessions")
    for statement in kept:
        connection.execute(statement)
    for statement in _SESSION_INDEXES:
        connection.execute(statement)
    for column in (
        "token_usage TEXT",
        "cost_microcents INTEGER",
        "parent_message_id TEXT",
        "agent_slug TEXT",
    ):
        connection.execute(f"ALTER TABLE session_messages ADD COLUMN {column}")
    for statement in _HANDOFF_STATEMENTS:
        connection.execute(statement)


# The indexes migration 5 adds (the older ones are carried over with the table).
_SESSION_INDEXES = (
    """
    CREATE INDEX agent_sessions_deleted_recent
        ON agent_sessions (deleted_at DESC, id DESC) WHERE deleted_at IS NOT NULL
    """,
    """
    CREATE INDEX agent_sessions_children
        ON agent_sessions (parent_session_id) WHERE parent_session_id IS NOT NULL
    """,
)
# A handoff: control passed from one agent to another (a delegation to a child session).
# sequence_number is the parent's message that asked for it (the delegate tool call).
_HANDOFF_STATEMENTS = (
    """
    CREATE TABLE session_handoffs (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        child_session_id TEXT,
        from_agent TEXT NOT NULL,
        to_agent TEXT NOT NULL,
        reason TEXT NOT NULL,
        sequence_number INTEGER NOT NULL,
        call_id TEXT,
        created_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX session_handoffs_session ON session_handoffs (session_id, sequence_number)",
)


def add_leases_and_changes(connection: Connection) -> None:
    """Version 3: turn leases and the session change log."""
    for statement in _LEASE_STATEMENTS:
        connection.execute(statement)


# session_leases: which process runs a turn of a session right now (docs/design.md §7.1).
# heartbeat_at is Unix time in seconds (every process on one machine shares the clock).
# session_changes: a short log of list-visible changes, written by triggers so that no code
# path can forget it; every process reads past the newest sequence it has seen (§3.1).
_LEASE_STATEMENTS = (
    """
    CREATE TABLE session_leases (
        session_id TEXT PRIMARY KEY REFERENCES agent_sessions (id),
        owner_pid INTEGER NOT NULL,
        owner_host TEXT NOT NULL,
        owner_token TEXT NOT NULL,
        heartbeat_at REAL NOT NULL,
        abort_requested INTEGER NOT NULL DEFAULT 0 CHECK (abort_requested IN (0, 1))
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE session_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('created', 'renamed', 'deleted', 'status'))
    )
    """,
    """
    CREATE TRIGGER session_changes_created AFTER INSERT ON agent_sessions
    BEGIN
        INSERT INTO session_changes (session_id, kind) VALUES (NEW.id, 'created');
    END
    """,
    """
    CREATE TRIGGER session_changes_renamed AFTER UPDATE OF title ON agent_sessions
    WHEN OLD.title IS NOT NEW.title
    BEGIN
        INSERT INTO session_changes (session_id, kind) VALUES (NEW.id, 'renamed');
    END
    """,
    """
    CREATE TRIGGER session_changes_status AFTER UPDATE OF status ON agent_sessions
    WHEN OLD.status IS NOT NEW.status
    BEGIN
        INSERT INTO session_changes (session_id, kind) VALUES (NEW.id, 'status');
    END
    """,
    """
    CREATE TRIGGER session_changes_deleted AFTER UPDATE OF deleted_at ON agent_sessions
    WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL
    BEGIN
        INSERT INTO session_changes (session_id, kind) VALUES (NEW.id, 'deleted');
    END
    """,
)


def add_file_checkpoints(connection: Connection) -> None:
    """Version 4: file checkpoints and rewinds."""
    for statement in _CHECKPOINT_STATEMENTS:
        connection.execute(statement)


# File checkpoints (docs/design.md §6.3). checkpoint_blobs holds file contents once per
# content hash, shared by every checkpoint and session that saw the same bytes; a row of
# session_checkpoints says what a file held before the turn started by the user message
# user_sequence first changed it (before_digest NULL: it did not exist) and the digest of
# what the agent left there (after_digest; a digest only, no blob). session_rewinds and
# session_rewind_files record each rewind the same way, so that a rewind can be undone.
_CHECKPOINT_STATEMENTS = (
    """
    CREATE TABLE checkpoint_blobs (
        digest TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        content BLOB NOT NULL
    )
    """,
    """
    CREATE TABLE session_checkpoints (
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        user_sequence INTEGER NOT NULL,
        path TEXT NOT NULL,
        before_digest TEXT,
        after_digest TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, user_sequence, path)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE session_rewinds (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        to_sequence INTEGER NOT NULL,
        forked_session_id TEXT,
        created_at TEXT NOT NULL,
        undone_at TEXT
    )
    """,
    "CREATE INDEX session_rewinds_session ON session_rewinds (session_id)",
    """
    CREATE TABLE session_rewind_files (
        rewind_id TEXT NOT NULL REFERENCES session_rewinds (id),
        path TEXT NOT NULL,
        before_digest TEXT,
        after_digest TEXT,
        PRIMARY KEY (rewind_id, path)
    ) WITHOUT ROWID
    """,
)


def add_model_choice(connection: Connection) -> None:
    """Version 8: the model a session was switched to."""
    # The model a front end switched the session to (relavium/setModel, ACP's model option),
    # as "<provider id>/<model>"; NULL: the agent's own (store/rows/model_choice.py).
    connection.execute("ALTER TABLE agent_sessions ADD COLUMN model_choice TEXT")


def add_event_inbox(connection: Connection) -> None:
    """Version 9: the event inbox; the event numbers a lease's owner reserved (§3.1)."""
    for statement in _INBOX_STATEMENTS:
        connection.execute(statement)


# While a process holds a session's lease it numbers that session's events itself (in
# memory, delivered before they are written, docs/design.md §3.1). Another process's events
# for that session wait here, unnumbered, until the owner (or, once the lease is gone, the
# next ordinary append, or a stale-lease takeover) moves them into session_events.
_INBOX_STATEMENTS = (
    """
    CREATE TABLE session_event_inbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        created_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX session_event_inbox_session ON session_event_inbox (session_id, id)",
    # The highest event number the lease's owner may hand out before it was written: the
    # owner reserves a block with the lease and extends it in its write-behind commits.
    "ALTER TABLE session_leases ADD COLUMN numbered_through INTEGER NOT NULL DEFAULT 0",
    # Left by a stale-lease takeover: the dead owner may have delivered numbers up to here
    # that it never wrote; the log numbers past them (a hole the clients step over).
    """
    CREATE TABLE session_event_floor (
        session_id TEXT PRIMARY KEY REFERENCES agent_sessions (id),
        numbered_through INTEGER NOT NULL
    ) WITHOUT ROWID
    """,
)


def add_workspace_memory(connection: Connection) -> None:
    """Version 6: workspace long-term memory."""
    for statement in _MEMORY_STATEMENTS:
        connection.execute(statement)


# Workspace long-term memory (docs/design.md §2.6): one row per kept revision of a
# workspace's document; the newest revision is the document. Kept in the encrypted database
# like everything else; the store prunes all but the newest few revisions per workspace.
_MEMORY_STATEMENTS = (
    """
    CREATE TABLE workspace_memory (
        workspace TEXT NOT NULL,
        revision INTEGER NOT NULL CHECK (revision >= 1),
        text TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('user', 'introspection')),
        session_id TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (workspace, revision)
    ) WITHOUT ROWID
    """,
)


def add_peers(connection: Connection) -> None:
    """Version 7: child cost caps, input filters, handoff audit and peer messages."""
    for column in (
        "cost_cap_microcents INTEGER",
        "input_filter TEXT",
        "context_messages INTEGER",
    ):
        connection.execute(f"ALTER TABLE session_handoffs ADD COLUMN {column}")
    for statement in _PEER_STATEMENTS:
        connection.execute(statement)


# Sessions working with sessions (docs/design.md §2.5, issue 23). A handoff keeps the child's
# cost cap (what was left under the parent's cap when it started; NULL: no cap), so a child
# resumed after a restart still obeys it, and the input filter that chose what context the
# child got. session_handoff_audit records each later use of a handoff (a resume in a new
# process, a replay). peer_messages / peer_deliveries are messages one session sends to
# others of the same workspace and what became of each delivery. Rows name sessions without
# foreign keys: purge erases them with the sessions (store/rows/session_ops.py).
_PEER_STATEMENTS = (
    """
    CREATE TABLE session_handoff_audit (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        handoff_id TEXT NOT NULL,
        child_session_id TEXT,
        action TEXT NOT NULL CHECK (action IN ('resumed', 'replayed')),
        detail TEXT,
        created_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX session_handoff_audit_session ON session_handoff_audit (session_id)",
    "CREATE INDEX session_handoff_audit_child ON session_handoff_audit (child_session_id)",
    """
    CREATE TABLE peer_messages (
        id TEXT PRIMARY KEY,
        from_session_id TEXT NOT NULL,
        from_agent TEXT NOT NULL,
        text TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('fire_and_forget', 'await_reply')),
        hops INTEGER NOT NULL,
        call_id TEXT,
        created_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX peer_messages_from ON peer_messages (from_session_id, created_at)",
    """
    CREATE TABLE peer_deliveries (
        message_id TEXT NOT NULL REFERENCES peer_messages (id),
        to_session_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'replied', 'failed',
            'aborted')),
        sequence_number INTEGER,
        delivered_at TEXT,
        reply TEXT,
        error TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (message_id, to_session_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX peer_deliveries_to ON peer_deliveries (to_session_id)",
)


def add_turn_reviews(connection: Connection) -> None:
    """Version 10: the review of each file a turn changed (docs/design.md §6.4)."""
    # NULL: not reviewed yet; 'kept' / 'undone': what relavium/reviewChanges decided, so a
    # reload or another window shows it.
    connection.execute(
        "ALTER TABLE session_checkpoints ADD COLUMN review TEXT"
        " CHECK (review IN ('kept', 'undone'))"
    )


def add_reasoning_signatures(connection: Connection) -> None:
    """Version 11: providers' opaque reasoning state, kept with its message (§5)."""
    connection.execute(
        """
        CREATE TABLE message_reasoning_signatures (
            message_id TEXT PRIMARY KEY REFERENCES session_messages (id) ON DELETE CASCADE,
            signatures TEXT NOT NULL
        ) WITHOUT ROWID
        """
    )


def add_memory_proposals(connection: Connection) -> None:
    """Version 12: workspace-memory proposals of automatic passes, pending the user's decision.

    An introspection pass no longer writes the workspace memory (issue 35): what it proposes
    waits here, marked with its session and reason, in no prompt, until the user accepts it
    (merged as a new revision) or rejects it. Purging the session erases its proposals.
    """
    connection.execute(
        """
        CREATE TABLE workspace_memory_proposals (
            id TEXT PRIMARY KEY,
            workspace TEXT NOT NULL,
            session_id TEXT,
            reason TEXT NOT NULL,
            text TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected')),
            created_at TEXT NOT NULL,
            decided_at TEXT,
            revision INTEGER
        )
        """
    )
    connection.execute(
        "CREATE INDEX workspace_memory_proposals_by_workspace"
        " ON workspace_memory_proposals (workspace, status, created_at)"
    )


def add_session_source_object(connection: Connection) -> None:
    """Version 13: ``agent_sessions.source`` holds seed 002's source object as JSON.

    Older rows hold the kind alone (``vscode``, ``cli``, …); each becomes ``{kind,
    interactive}``: a replay and a delegated child are not interactive, every other source
    was a person at an editor or a terminal. A row already holding an object is left alone.
    """
    connection.execute(
        "UPDATE agent_sessions SET source = json_object('kind', source, 'interactive',"
        " json(CASE WHEN source = 'replay' OR parent_session_id IS NOT NULL"
        " THEN 'false' ELSE 'true' END))"
        " WHERE NOT (json_valid(source) AND json_type(source) = 'object'"
        " AND json_type(source, '$.kind') = 'text')"
    )


def add_inactive_status(connection: Connection) -> None:
    """Version 14: the ``inactive`` status (a session nobody touched for a long time)."""
    _rebuild_table(
        connection,
        "agent_sessions",
        lambda sql: _replace_once(sql, "'failed', 'ended')", "'failed', 'ended', 'inactive')"),
    )


def add_message_author_check(connection: Connection) -> None:
    """Version 15: every message has exactly one author, or none for a system row (seed 001).

    The author of a message is the agent named by ``agent_slug`` or, for a user message
    without one, the user. An assistant message and a tool result always name their agent
    (the session's, for rows written before they did), a system row names none; a user
    message names an agent when one wrote it (a delegated task, a peer message). SQLite adds
    a ``CHECK`` only by rebuilding the table, so the rows are completed first.
    """
    connection.execute(
        "UPDATE session_messages SET agent_slug = (SELECT agent_slug FROM agent_sessions"
        " WHERE agent_sessions.id = session_messages.session_id)"
        " WHERE role IN ('assistant', 'tool') AND agent_slug IS NULL"
    )
    connection.execute(
        "UPDATE session_messages SET agent_slug = NULL"
        " WHERE role = 'system' AND agent_slug IS NOT NULL"
    )
    _rebuild_table(
        connection,
        "session_messages",
        lambda sql: _add_table_constraint(sql, _AUTHOR_CHECK),
    )


_AUTHOR_CHECK = (
    "CONSTRAINT session_messages_one_author CHECK ("
    "(role = 'system' AND agent_slug IS NULL)"
    " OR (role IN ('assistant', 'tool') AND agent_slug IS NOT NULL)"
    " OR role = 'user')"
)


def add_replays_and_tool_cassettes(connection: Connection) -> None:
    """Version 16: one audit row per replay, and the tool cassettes exports wrote (§9)."""
    for statement in _REPLAY_STATEMENTS:
        connection.execute(statement)


# session_replays: every replay of a session (which session it replayed into, the tool
# replay mode, how it went). session_tool_cassettes: the tool cassette the newest export of
# a session wrote (relavium-tool-cassette/1.0 text, encrypted with the rest of the history);
# a later replay reads it back. Neither has foreign keys: purge erases them with the session.
_REPLAY_STATEMENTS = (
    """
    CREATE TABLE session_replays (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        replay_session_id TEXT,
        mode TEXT NOT NULL CHECK (mode IN ('auto', 'live', 'recorded', 'mixed')),
        status TEXT NOT NULL CHECK (status IN ('running', 'matched', 'differed', 'stopped')),
        turns_replayed INTEGER NOT NULL DEFAULT 0,
        differences INTEGER NOT NULL DEFAULT 0,
        live_tool_calls INTEGER NOT NULL DEFAULT 0,
        recorded_tool_calls INTEGER NOT NULL DEFAULT 0,
        cassette TEXT NOT NULL CHECK (cassette IN ('stored', 'transcript')),
        detail TEXT,
        created_at TEXT NOT NULL,
        finished_at TEXT
    )
    """,
    "CREATE INDEX session_replays_session ON session_replays (session_id, created_at)",
    "CREATE INDEX session_replays_replay ON session_replays (replay_session_id)",
    """
    CREATE TABLE session_tool_cassettes (
        session_id TEXT PRIMARY KEY,
        content TEXT NOT NULL,
        calls INTEGER NOT NULL,
        written_at TEXT NOT NULL
    ) WITHOUT ROWID
    """,
)


def _rebuild_table(connection: Connection, table: str, change: Callable[[str], str]) -> None:
    """Change a table's constraints the way SQLite documents: create, copy, drop, rename.

    The new table is the current one's ``CREATE`` statement passed through ``change``, so
    columns other migrations added (in whatever order branches land) come along. Indexes and
    triggers on the table, and views and triggers that name it, are dropped around the swap
    and made again from their own SQL. Foreign keys are off while migrating (``migrate``).
    """
    row = connection.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    if row is None:
        raise StoreError(f"cannot rebuild {table}: the table does not exist")
    rebuilt = f"{table}_rebuilt"
    head = re.compile(rf'^\s*CREATE\s+TABLE\s+("?){re.escape(table)}\1\s*\(', re.IGNORECASE)
    created, found = head.subn(f"CREATE TABLE {rebuilt} (", change(str(row[0])), count=1)
    if found != 1:
        raise StoreError(f"cannot rebuild {table}: its CREATE statement was not recognised")
    names = re.compile(rf"\b{re.escape(table)}\b")
    dependents = [
        (str(kind), str(name), str(sql))
        for kind, name, tbl_name, sql in connection.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master"
            " WHERE type IN ('index', 'trigger', 'view') AND sql IS NOT NULL"
            " ORDER BY CASE type WHEN 'view' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, name"
        )
        if tbl_name == table or (kind != "index" and names.search(str(sql)))
    ]
    connection.execute(created)
    connection.execute(f"INSERT INTO {rebuilt} SELECT * FROM {table}")  # noqa: S608
    for kind, name, _sql in reversed(dependents):
        connection.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
    connection.execute(f"DROP TABLE {table}")
    connection.execute(f"ALTER TABLE {rebuilt} RENAME TO {table}")
    for _kind, _name, sql in dependents:
        connection.execute(sql)


def _replace_once(sql: str, old: str, new: str) -> str:
    if sql.count(old) != 1:
        raise StoreError(f"cannot change the schema: expected {old!r} once in {sql[:80]!r}…")
    return sql.replace(old, new)


def _add_table_constraint(sql: str, constraint: str) -> str:
    body_end = sql.rstrip().rfind(")")
    if body_end < 0:
        raise StoreError("cannot change the schema: a CREATE TABLE without a column list")
    return f"{sql[:body_end].rstrip()},\n    {constraint}\n)"


def add_learned_context_window(connection: Connection) -> None:
    """Version 17: the context window a provider's refusal showed a session's model has.

    ``{"model": ..., "tokens": ...}`` (``store/rows/learned_window.py``); NULL: none learnt. A
    resumed session plans for it instead of hitting the same refusal again (issue 38).
    """
    connection.execute("ALTER TABLE agent_sessions ADD COLUMN learned_context_window TEXT")
