"""A database written by the release before the session model opens and upgrades without loss.

``tests/fixtures/db/schema_v2.db`` was made by that release's own store code (schema version 2;
how: ``tests/fixtures/db/make_schema_v2_fixture.py``). It is a real SQLCipher file keyed with
the fixed test-only raw key ``bytes(range(32))`` — the form ``RELAVIUM_DB_KEY`` supplies — so
this test opens it the way the server opens any database: ``SessionStore.open(path, key)``,
which verifies the key and migrates. Every test works on a copy.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from store_records import text

from relavium_lsp.contracts.content import TextPart, ToolCallPart
from relavium_lsp.contracts.usage import TokenUsage
from relavium_lsp.store.db.connection import Connection, open_database
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.db.migrations import MIGRATIONS, current_version
from relavium_lsp.store.sessions import SessionStore

FIXTURE = Path(__file__).parents[2] / "fixtures" / "db" / "schema_v2.db"
FIXTURE_KEY = DbKey(bytes(range(32)), "env")
_OLD_SESSION_COLUMNS = (
    "id, agent_slug, agent_snapshot, title, model_id, context, working_dir, status, source,"
    " total_input_tokens, total_output_tokens, total_cost_microcents, message_count,"
    " turn_count, last_message_preview, exported_workflow_path, created_at, updated_at,"
    " deleted_at"
)
_OLD_MESSAGE_COLUMNS = (
    "message_rowid, id, session_id, sequence_number, role, content, model_id, compaction,"
    " interruption, plain_text, token_estimate, visible_ordinal, cumulative_tokens,"
    " rolled_back, timestamp"
)


@pytest.fixture
def old_db(tmp_path: Path) -> Path:
    copy = tmp_path / "history.db"
    shutil.copyfile(FIXTURE, copy)
    copy.chmod(0o600)
    return copy


def _rows(connection: Connection, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in connection.execute(sql).fetchall()]


def _old_content(connection: Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row the version-2 schema holds, in the columns it had."""
    return {
        "sessions": _rows(
            connection, f"SELECT {_OLD_SESSION_COLUMNS} FROM agent_sessions ORDER BY id"
        ),
        "messages": _rows(
            connection, f"SELECT {_OLD_MESSAGE_COLUMNS} FROM session_messages ORDER BY 1"
        ),
        "costs": _rows(connection, "SELECT * FROM session_costs ORDER BY session_id, model"),
        "events": _rows(
            connection, "SELECT * FROM session_events ORDER BY session_id, sequence_number"
        ),
        "artifacts": _rows(connection, "SELECT * FROM session_artifacts ORDER BY id"),
    }


def test_the_fixture_is_what_the_old_release_wrote(old_db: Path) -> None:
    connection = open_database(old_db, FIXTURE_KEY)
    try:
        assert current_version(connection) == 2
        content = _old_content(connection)
    finally:
        connection.close()
    assert [row[0] for row in content["sessions"]] == ["s-deleted", "s-kept"]
    assert len(content["messages"]) == 8  # two turns, one rolled back, two markers, one more
    assert content["costs"] and content["events"] and content["artifacts"]


def test_upgrade_keeps_every_row_and_adds_the_session_model(old_db: Path) -> None:
    before_connection = open_database(old_db, FIXTURE_KEY)
    try:
        before = _old_content(before_connection)
    finally:
        before_connection.close()

    store = SessionStore.open(old_db, FIXTURE_KEY)
    try:
        connection = store.connection
        assert current_version(connection) == MIGRATIONS[-1].version
        after = _old_content(connection)
        # Migration 13: the source (column 8) became the object whose kind it named.
        sources = [json.loads(row[8]) for row in after["sessions"]]
        assert sources == [{"kind": row[8], "interactive": True} for row in before["sessions"]]
        after["sessions"] = [
            (*row[:8], old[8], *row[9:])
            for row, old in zip(after["sessions"], before["sessions"], strict=True)
        ]
        assert after == before
        assert store.check_integrity() == ["ok"]
        # The rebuilt table keeps the triggers and indexes earlier migrations gave it.
        triggers = connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'agent_sessions'"
        ).fetchall()
        assert len(triggers) == 4
        indexes = {
            str(row[0])
            for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index'"
                " AND tbl_name = 'agent_sessions' AND sql IS NOT NULL"
            )
        }
        assert {"agent_sessions_recent", "agent_sessions_children"} <= indexes
        assert connection.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []

        kept = store.get_session("s-kept")
        assert kept is not None
        assert kept.title == "Résumé of the café plan"
        assert kept.status == "ended"
        assert kept.totals.cost_microcents == 4500
        assert kept.description is None and kept.metadata is None
        assert kept.forked_from is None and kept.parent_session_id is None
        assert store.get_session("s-deleted") is None
        deleted = store.get_session("s-deleted", include_deleted=True)
        assert deleted is not None and deleted.deleted_at is not None

        messages, _ = store.get_transcript("s-kept")
        assert [m.sequence_number for m in messages] == [1, 2, 3, 4, 6, 7]
        assert messages[1].content[1] == ToolCallPart(
            id="call-1", name="list_dir", args={"path": "."}
        )
        assert messages[4].compaction is not None and messages[5].interruption is not None
        # Rows from before the upgrade have no usage or threading; nothing is invented.
        assert all(m.token_usage is None and m.parent_message_id is None for m in messages)

        assert store.list_sessions(query="files").sessions[0].id == "s-kept"
        artifact_id = str(connection.execute("SELECT id FROM session_artifacts").fetchone()[0])
        assert store.load_artifact("s-kept", artifact_id) == "a.py\nb.py\n(full output)"
        assert [e.payload.type for e in store.events_after("s-kept", 0)] == [
            "session:turn_started",
            "session:turn_completed",
        ]

        # The new statuses and columns work on the upgraded file.
        store.set_status("s-kept", "failed")
        store.set_status("s-kept", "awaiting_peer")
        store.set_metadata("s-kept", {"panel": "left"})
        store.set_description("s-kept", "Planning the café", "user")
        note = store.append_message(
            "s-kept",
            "assistant",
            text("after the upgrade"),
            token_usage=TokenUsage(input_tokens=5, output_tokens=2),
            cost_microcents=9,
        )
        assert note.parent_message_id == messages[-1].id
        changes = connection.execute(
            "SELECT kind FROM session_changes WHERE session_id = 's-kept' ORDER BY seq"
        ).fetchall()
        assert [row[0] for row in changes] == ["status", "status"]  # the triggers still fire
        again = store.get_session("s-kept")
        assert again is not None
        assert again.status == "awaiting_peer"
        assert again.metadata == {"panel": "left"}
        assert again.description_source == "user"
        stored, _ = store.get_transcript("s-kept")
        assert stored[-1] == note
    finally:
        store.close()


def test_reopening_an_upgraded_database_does_not_migrate_again(old_db: Path) -> None:
    SessionStore.open(old_db, FIXTURE_KEY).close()
    store = SessionStore.open(old_db, FIXTURE_KEY)
    try:
        versions = [
            row[0] for row in store.connection.execute("SELECT version FROM schema_migrations")
        ]
        assert versions == [migration.version for migration in MIGRATIONS]
        assert store.get_transcript("s-kept")[0][0].content == [TextPart(text="list the files")]
    finally:
        store.close()
