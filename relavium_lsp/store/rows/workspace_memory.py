"""Workspace long-term memory in the encrypted history database (§2.6, migration 6).

Each write appends a revision row; the newest one is the document, and only the newest
:data:`KEEP_REVISIONS` are kept per workspace. A write is compare-and-swap on the revision
inside ``BEGIN IMMEDIATE``, so two processes (editor windows) on one database cannot both
build on the same revision: the second is refused with :class:`MemoryConflict`.
"""

from __future__ import annotations

from collections.abc import Callable

from relavium_lsp.contracts.memory import (
    MemorySource,
    WorkspaceMemory,
    WorkspaceMemoryRevision,
)
from relavium_lsp.errors import MemoryConflict
from relavium_lsp.store.db.connection import Connection, write_transaction
from relavium_lsp.store.models import utc_timestamp

KEEP_REVISIONS = 10
# A read-modify-write step: the new text for the current one, or None to leave it as it is.
MemoryChange = Callable[[str], str | None]


def read_memory(connection: Connection, workspace: str) -> WorkspaceMemory:
    """The workspace's document and its kept revisions (revision 0 when none was written)."""
    rows = connection.execute(
        "SELECT revision, text, source, session_id, created_at FROM workspace_memory"
        " WHERE workspace = ? ORDER BY revision DESC",
        (workspace,),
    ).fetchall()
    if not rows:
        return WorkspaceMemory(workspace=workspace, text="", revision=0)
    revision, text, source, session_id, created_at = rows[0]
    return WorkspaceMemory(
        workspace=workspace,
        text=text,
        revision=revision,
        source=source,
        session_id=session_id,
        updated_at=created_at,
        history=[
            WorkspaceMemoryRevision(
                revision=row[0],
                source=row[2],
                session_id=row[3],
                updated_at=row[4],
                chars=len(row[1]),
            )
            for row in rows
        ],
    )


def write_memory(
    connection: Connection,
    workspace: str,
    text: str,
    *,
    base_revision: int,
    source: MemorySource,
    session_id: str | None = None,
) -> WorkspaceMemory:
    """Store ``text`` as the next revision if ``base_revision`` is still the newest."""
    with write_transaction(connection):
        current = _newest_revision(connection, workspace)
        if current != base_revision:
            raise MemoryConflict(
                f"the workspace memory changed meanwhile (it is at revision {current}, this "
                f"edit was based on revision {base_revision}); reload it, merge, and save again",
                current_revision=current,
            )
        _append(connection, workspace, current + 1, text, source, session_id)
    return read_memory(connection, workspace)


def update_memory(
    connection: Connection,
    workspace: str,
    change: MemoryChange,
    *,
    source: MemorySource,
    session_id: str | None = None,
) -> WorkspaceMemory | None:
    """Apply ``change`` to the newest text in one transaction; None when it changed nothing."""
    with write_transaction(connection):
        current = _newest_revision(connection, workspace)
        row = connection.execute(
            "SELECT text FROM workspace_memory WHERE workspace = ? AND revision = ?",
            (workspace, current),
        ).fetchone()
        before = "" if row is None else str(row[0])
        after = change(before)
        if after is None or after == before:
            return None
        _append(connection, workspace, current + 1, after, source, session_id)
    return read_memory(connection, workspace)


def newest_revisions(connection: Connection) -> dict[str, tuple[int, MemorySource]]:
    """Every workspace's newest revision and who wrote it (for watching other processes)."""
    rows = connection.execute(
        "SELECT workspace, revision, source FROM workspace_memory AS m WHERE revision ="
        " (SELECT MAX(revision) FROM workspace_memory WHERE workspace = m.workspace)"
    ).fetchall()
    return {str(row[0]): (int(row[1]), row[2]) for row in rows}


def _newest_revision(connection: Connection, workspace: str) -> int:
    row = connection.execute(
        "SELECT COALESCE(MAX(revision), 0) FROM workspace_memory WHERE workspace = ?",
        (workspace,),
    ).fetchone()
    return int(row[0])


def _append(
    connection: Connection,
    workspace: str,
    revision: int,
    text: str,
    source: MemorySource,
    session_id: str | None,
) -> None:
    connection.execute(
        "INSERT INTO workspace_memory (workspace, revision, text, source, session_id, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (workspace, revision, text, source, session_id, utc_timestamp()),
    )
    connection.execute(
        "DELETE FROM workspace_memory WHERE workspace = ? AND revision <= ?",
        (workspace, revision - KEEP_REVISIONS),
    )
