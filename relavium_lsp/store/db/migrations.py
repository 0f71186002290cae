"""Schema migrations: an ordered list of functions, each recorded in ``schema_migrations``.

:func:`migrate` applies the missing ones inside one ``BEGIN IMMEDIATE`` transaction, so two
processes opening a fresh database at once cannot both migrate, and a failure leaves the
schema as it was. A database whose recorded version is newer than this code knows is refused
rather than written to.

Never edit a released migration; append a new one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from relavium_lsp.errors import StoreError
from relavium_lsp.store.db.connection import Connection
from relavium_lsp.store.db.schema_steps import (
    add_cache_token_columns,
    add_event_inbox,
    add_file_checkpoints,
    add_inactive_status,
    add_learned_context_window,
    add_leases_and_changes,
    add_memory_proposals,
    add_message_author_check,
    add_model_choice,
    add_peers,
    add_reasoning_signatures,
    add_replays_and_tool_cassettes,
    add_session_model,
    add_session_source_object,
    add_turn_reviews,
    add_workspace_memory,
    create_initial_schema,
)


@dataclass(frozen=True)
class Migration:
    """One schema step: ``apply`` runs inside the migration transaction."""

    version: int
    name: str
    apply: Callable[[Connection], None]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial schema", create_initial_schema),
    Migration(2, "prompt-cache tokens in session_costs", add_cache_token_columns),
    Migration(3, "turn leases and the session change log", add_leases_and_changes),
    Migration(4, "file checkpoints and rewinds", add_file_checkpoints),
    Migration(5, "session model: usage, threading, lineage, statuses, handoffs", add_session_model),
    Migration(6, "workspace long-term memory", add_workspace_memory),
    Migration(7, "peers: child cost caps, input filters, handoff audit, peer messages", add_peers),
    Migration(8, "the model a session was switched to", add_model_choice),
    Migration(9, "the event inbox of sessions another process runs", add_event_inbox),
    Migration(10, "the review of the files a turn changed", add_turn_reviews),
    Migration(
        11, "providers' reasoning signatures, kept with their message", add_reasoning_signatures
    ),
    Migration(12, "workspace-memory proposals awaiting the user", add_memory_proposals),
    Migration(13, "the session source as an object", add_session_source_object),
    Migration(14, "the inactive session status", add_inactive_status),
    Migration(15, "exactly one author per message", add_message_author_check),
    Migration(16, "replay audit rows and stored tool cassettes", add_replays_and_tool_cassettes),
    Migration(
        17, "the context window a provider showed a session's model has", add_learned_context_window
    ),
)


def latest_version(migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    """The schema version this code writes."""
    return max(migration.version for migration in migrations)


def current_version(connection: Connection) -> int:
    """The highest applied migration (0 for a fresh database)."""
    exists = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if exists is None:
        return 0
    row = connection.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return int(row[0])


def migrate(connection: Connection, migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    """Apply every missing migration in one transaction; returns the resulting version."""
    _check_ordered(migrations)
    known = latest_version(migrations)
    if current_version(connection) == known:
        # The common case: nothing to do, so do not take the write lock.
        return known
    # A migration may rebuild a table that others reference (SQLite's way to change a
    # constraint); foreign keys cannot be switched inside a transaction, so they are off for
    # the whole migration and checked with foreign_key_check before the commit instead.
    connection.execute("PRAGMA foreign_keys=OFF")
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        version = current_version(connection)
        if version > known:
            raise StoreError(
                f"the history database has schema version {version}, newer than this "
                f"relavium-lsp understands ({known}); upgrade relavium-lsp to open it"
            )
        for migration in migrations:
            if migration.version <= version:
                continue
            migration.apply(connection)
            connection.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, datetime.now(UTC).isoformat()),
            )
        broken = connection.execute("PRAGMA foreign_key_check").fetchall()
        if broken:
            raise StoreError(f"the schema migration left {len(broken)} dangling references")
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    finally:
        connection.execute("PRAGMA foreign_keys=ON")
    return max(version, known)


def _check_ordered(migrations: tuple[Migration, ...]) -> None:
    # Increasing, not necessarily contiguous: parallel branches each own a version number
    # (docs/design.md §7) and are renumbered when they land.
    versions = [migration.version for migration in migrations]
    if versions != sorted(set(versions)) or not versions or versions[0] != 1:
        raise StoreError("migrations must be numbered 1, 2, 3, … in increasing order")
