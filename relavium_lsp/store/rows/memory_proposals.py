"""Workspace-memory proposals of automatic passes, kept apart until the user decides (§2.6).

An introspection pass (automatic or asked for) never changes the workspace memory: what its
answer proposes is stored here, marked with the session and the reason of the pass, and is
in no prompt. The user accepts it — then it is merged into the document as a new revision,
``source = 'introspection'`` with that session — or rejects it (migration 12, issue 35).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Literal

from relavium_lsp.store.db.connection import Connection, write_transaction
from relavium_lsp.store.models import utc_timestamp

ProposalStatus = Literal["pending", "accepted", "rejected"]
# Pending proposals kept per workspace (an older one is dropped when a newer one comes), and
# decided ones kept for the record.
KEEP_PENDING = 20
KEEP_DECIDED = 50


@dataclass(frozen=True)
class ProposalRow:
    """One stored proposal."""

    id: str
    workspace: str
    session_id: str | None
    reason: str
    text: str
    status: ProposalStatus
    created_at: str
    decided_at: str | None
    revision: int | None


_COLUMNS = "id, workspace, session_id, reason, text, status, created_at, decided_at, revision"


def add_proposal(
    connection: Connection, workspace: str, text: str, *, session_id: str | None, reason: str
) -> ProposalRow:
    """Store a pending proposal (the oldest pending ones past :data:`KEEP_PENDING` go)."""
    proposal_id = uuid.uuid4().hex
    with write_transaction(connection):
        connection.execute(
            f"INSERT INTO workspace_memory_proposals ({_COLUMNS})"  # noqa: S608 - constants
            " VALUES (?, ?, ?, ?, ?, 'pending', ?, NULL, NULL)",
            (proposal_id, workspace, session_id, reason, text, utc_timestamp()),
        )
        _prune(connection, workspace, "pending", KEEP_PENDING)
    found = get_proposal(connection, proposal_id)
    assert found is not None
    return found


def get_proposal(connection: Connection, proposal_id: str) -> ProposalRow | None:
    """One proposal by id."""
    row = connection.execute(
        f"SELECT {_COLUMNS} FROM workspace_memory_proposals WHERE id = ?",  # noqa: S608
        (proposal_id,),
    ).fetchone()
    return None if row is None else ProposalRow(*row)


def pending_proposals(connection: Connection, workspace: str) -> list[ProposalRow]:
    """The workspace's pending proposals, oldest first."""
    rows = connection.execute(
        f"SELECT {_COLUMNS} FROM workspace_memory_proposals"  # noqa: S608
        " WHERE workspace = ? AND status = 'pending' ORDER BY created_at, rowid",
        (workspace,),
    ).fetchall()
    return [ProposalRow(*row) for row in rows]


def mark_decided(
    connection: Connection, proposal_id: str, status: ProposalStatus, revision: int | None
) -> bool:
    """Record the user's decision on a pending proposal; False if it was decided already."""
    with write_transaction(connection):
        changed = connection.execute(
            "UPDATE workspace_memory_proposals SET status = ?, decided_at = ?, revision = ?"
            " WHERE id = ? AND status = 'pending'",
            (status, utc_timestamp(), revision, proposal_id),
        ).rowcount
        row = connection.execute(
            "SELECT workspace FROM workspace_memory_proposals WHERE id = ?", (proposal_id,)
        ).fetchone()
        if row is not None:
            for kept in ("accepted", "rejected"):
                _prune(connection, str(row[0]), kept, KEEP_DECIDED)
    return bool(changed)


def _prune(connection: Connection, workspace: str, status: str, keep: int) -> None:
    connection.execute(
        "DELETE FROM workspace_memory_proposals WHERE workspace = ? AND status = ? AND id NOT IN"
        " (SELECT id FROM workspace_memory_proposals WHERE workspace = ? AND status = ?"
        " ORDER BY created_at DESC, rowid DESC LIMIT ?)",
        (workspace, status, workspace, status, keep),
    )
