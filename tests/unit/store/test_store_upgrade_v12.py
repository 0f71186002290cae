"""A database the release before migration 13 wrote upgrades: sources, authors, statuses.

``tests/fixtures/db/schema_v12.db`` was written by that release's own store code (how:
``tests/fixtures/db/make_schema_v12_fixture.py``), keyed with the fixed test-only raw key
``bytes(range(32))``. Migrations 13 to 16 turn its plain-string sources into source objects,
name the author of every assistant and tool row, rebuild two tables for new ``CHECK``
constraints and add the replay tables; nothing else may change. Every test works on a copy.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from relavium_lsp.contracts.content import ToolResultPart
from relavium_lsp.contracts.session import SessionSource
from relavium_lsp.store.db.connection import Connection, open_database
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.db.migrations import MIGRATIONS, current_version
from relavium_lsp.store.sessions import SessionStore

FIXTURE = Path(__file__).parents[2] / "fixtures" / "db" / "schema_v12.db"
FIXTURE_KEY = DbKey(bytes(range(32)), "env")
_MESSAGE_COLUMNS = (
    "message_rowid, id, session_id, sequence_number, role, content, model_id, compaction,"
    " interruption, plain_text, token_estimate, visible_ordinal, cumulative_tokens,"
    " rolled_back, timestamp, token_usage, cost_microcents, parent_message_id"
)


@pytest.fixture
def old_db(tmp_path: Path) -> Path:
    copy = tmp_path / "history.db"
    shutil.copyfile(FIXTURE, copy)
    copy.chmod(0o600)
    return copy


def _rows(connection: Connection, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in connection.execute(sql).fetchall()]


def _read(path: Path, sql: str) -> list[tuple[Any, ...]]:
    connection = open_database(path, FIXTURE_KEY)
    try:
        return _rows(connection, sql)
    finally:
        connection.close()


def test_the_fixture_is_what_the_old_release_wrote(old_db: Path) -> None:
    connection = open_database(old_db, FIXTURE_KEY)
    try:
        assert current_version(connection) == 12
        sources = _rows(connection, "SELECT id, source FROM agent_sessions ORDER BY id")
        authors = _rows(
            connection,
            "SELECT role, agent_slug FROM session_messages WHERE session_id = 's-vscode'"
            " ORDER BY sequence_number",
        )
    finally:
        connection.close()
    assert dict(sources) == {
        "s-child": "vscode",
        "s-neovim": "neovim",
        "s-replay": "replay",
        "s-script": "my-script",
        "s-vscode": "vscode",
    }
    assert ("tool", None) in authors  # the old runner named no author on tool results


def test_upgrade_turns_sources_into_objects_and_names_every_author(old_db: Path) -> None:
    messages_before = _read(old_db, f"SELECT {_MESSAGE_COLUMNS} FROM session_messages ORDER BY 1")
    handoffs_before = _read(old_db, "SELECT * FROM session_handoffs")
    store = SessionStore.open(old_db, FIXTURE_KEY)
    try:
        connection = store.connection
        assert current_version(connection) == MIGRATIONS[-1].version
        assert store.check_integrity() == ["ok"]
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
        # Every message row kept its rowid (the full-text index points at it) and content.
        after = _rows(connection, f"SELECT {_MESSAGE_COLUMNS} FROM session_messages ORDER BY 1")
        assert after == messages_before
        assert _rows(connection, "SELECT * FROM session_handoffs") == handoffs_before
        assert store.list_sessions(query="Friday").sessions[0].id == "s-vscode"

        def source(session_id: str) -> SessionSource:
            record = store.get_session(session_id)
            assert record is not None
            return record.source

        assert source("s-vscode") == SessionSource(kind="vscode", interactive=True)
        assert source("s-script") == SessionSource(kind="my-script", interactive=True)
        # A replay and a delegated child were never driven by a person.
        assert source("s-replay") == SessionSource(kind="replay", interactive=False)
        assert source("s-child") == SessionSource(kind="vscode", interactive=False)
        stored = connection.execute("SELECT source FROM agent_sessions WHERE id = 's-neovim'")
        assert json.loads(stored.fetchone()[0]) == {"kind": "neovim", "interactive": True}
        kept = store.get_session("s-vscode")
        assert kept is not None and kept.metadata == {"panel": "left"}

        authors = _rows(
            connection,
            "SELECT session_id, role, agent_slug FROM session_messages"
            " ORDER BY session_id, sequence_number",
        )
        assert authors == [
            ("s-child", "user", "relavium-default"),  # the delegating agent wrote the task
            ("s-child", "assistant", "helper"),  # the child's own agent, as the row's session
            ("s-neovim", "user", None),
            ("s-neovim", "assistant", "relavium-default"),
            ("s-vscode", "user", None),
            ("s-vscode", "assistant", "relavium-default"),
            ("s-vscode", "tool", "relavium-default"),
            ("s-vscode", "assistant", "relavium-default"),
            ("s-vscode", "tool", "relavium-default"),
            ("s-vscode", "assistant", "relavium-default"),
        ]
        # The rebuilt tables keep what hung on them: the change-log triggers, the view the
        # full-text index reads, the signatures' foreign key.
        triggers = connection.execute(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'"
            " AND tbl_name = 'agent_sessions'"
        ).fetchone()
        assert triggers[0] == 4
        views = connection.execute("SELECT name FROM sqlite_master WHERE type = 'view'").fetchall()
        assert [row[0] for row in views] == ["session_messages_visible"]
        assert connection.execute(
            "SELECT \"table\" FROM pragma_foreign_key_list('message_reasoning_signatures')"
        ).fetchall() == [("session_messages",)]

        # The new status and the author check hold on the upgraded file.
        store.set_status("s-neovim", "inactive")
        again = store.get_session("s-neovim")
        assert again is not None and again.status == "inactive"
        with pytest.raises(Exception, match="CHECK constraint failed"):
            connection.execute("UPDATE session_messages SET agent_slug = NULL WHERE role = 'tool'")
        with pytest.raises(Exception, match="CHECK constraint failed"):
            # A system row has no author; this user row names the delegating agent.
            connection.execute(
                "UPDATE session_messages SET role = 'system' WHERE session_id = 's-child'"
                " AND role = 'user'"
            )
        note = store.append_message(
            "s-vscode", "tool", [ToolResultPart(tool_call_id="call-9", result="after the upgrade")]
        )
        assert note.agent_slug == "relavium-default"
    finally:
        store.close()
