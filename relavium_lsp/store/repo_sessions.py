"""The session repository, sessions part: session rows and what hangs off them.

Creating, reading, listing and changing session rows; import, fork, export snapshots,
restore and purge; handoffs and rolled-back turns. Mixed into ``SessionStore``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from relavium_lsp.contracts.base import compact_json
from relavium_lsp.contracts.session import (
    AgentSessionRecord,
    DescriptionSource,
    HandoffRecord,
    RolledBackTurn,
    SessionMessage,
    SessionStatus,
    check_metadata,
)
from relavium_lsp.contracts.session_ops import ArtifactInfo
from relavium_lsp.errors import SessionNotFound, StoreError
from relavium_lsp.store import handoffs, leases, listing, rollbacks, session_ops, transfer
from relavium_lsp.store.db import write_transaction
from relavium_lsp.store.models import (
    SESSION_COLUMNS,
    SESSION_PLACEHOLDERS,
    SessionPage,
    session_from_row,
    session_to_row,
    utc_timestamp,
)
from relavium_lsp.store.repo_base import RepositoryBase


class SessionRows(RepositoryBase):
    """Session rows (part of ``SessionStore``)."""

    # -- sessions ---------------------------------------------------------------------------

    def create_session(self, record: AgentSessionRecord) -> None:
        """Persist a new session row; an existing id is a :class:`StoreError`."""
        with write_transaction(self._connection):
            exists = self._connection.execute(
                "SELECT 1 FROM agent_sessions WHERE id = ?", (record.id,)
            ).fetchone()
            if exists is not None:
                raise StoreError(f"a session with id {record.id!r} already exists")
            self._connection.execute(
                f"INSERT INTO agent_sessions ({SESSION_COLUMNS}, working_dir)"  # noqa: S608
                f" VALUES ({SESSION_PLACEHOLDERS})",
                session_to_row(record),
            )

    def get_session(
        self, session_id: str, *, include_deleted: bool = False
    ) -> AgentSessionRecord | None:
        """The session row, or ``None`` (also for a soft-deleted one unless asked)."""
        row = self._connection.execute(
            f"SELECT {SESSION_COLUMNS} FROM agent_sessions WHERE id = ?",  # noqa: S608
            (session_id,),
        ).fetchone()
        if row is None or (row[17] is not None and not include_deleted):
            return None
        return session_from_row(row)

    def list_sessions(
        self,
        *,
        workspace: str | None = None,
        status: SessionStatus | None = None,
        query: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        deleted: bool = False,
    ) -> SessionPage:
        """Undeleted (or only deleted) sessions, newest first, filters combined, keyset-paged."""
        return listing.list_sessions(
            self._connection,
            workspace=workspace,
            status=status,
            query=query,
            limit=limit,
            cursor=cursor,
            deleted=deleted,
        )

    def set_status(self, session_id: str, status: SessionStatus) -> None:
        """Change the session's status."""
        self._update_session(session_id, "status = ?", (status,))

    def rename_session(self, session_id: str, title: str) -> None:
        """Set the session's title."""
        self._update_session(session_id, "title = ?", (title,))

    def soft_delete_session(
        self, session_id: str, *, clock: leases.LeaseClock | None = None
    ) -> None:
        """Hide the session from lists and getters; nothing is erased.

        With ``clock``: refused (:class:`SessionRunningElsewhere`) while another process holds
        a live lease on it, checked in the same transaction.
        """
        with write_transaction(self._connection):
            if clock is not None:
                leases.refuse_if_leased(self._connection, session_id, clock, "delete")
            self._update_session(session_id, "deleted_at = ?", (utc_timestamp(),))

    def set_description(
        self, session_id: str, description: str | None, source: DescriptionSource | None
    ) -> None:
        """Set (or clear) the session's description and who wrote it."""
        self._update_session(
            session_id,
            "description = ?, description_source = ?",
            (description, None if description is None else source),
        )

    def set_metadata(self, session_id: str, metadata: dict[str, Any] | None) -> None:
        """Replace the session's metadata object (size-checked by the contract)."""
        check_metadata(metadata)
        self._update_session(
            session_id, "metadata = ?", (None if metadata is None else compact_json(metadata),)
        )

    def set_exported_path(self, session_id: str, path: str) -> None:
        """Record where the session was last exported (it stays resumable)."""
        self._update_session(session_id, "exported_workflow_path = ?", (path,))

    def increment_turn_count(self, session_id: str) -> int:
        """Count one more turn; returns the new count."""
        row = self._connection.execute(
            "UPDATE agent_sessions SET turn_count = turn_count + 1, updated_at = ?"
            " WHERE id = ? AND deleted_at IS NULL RETURNING turn_count",
            (utc_timestamp(), session_id),
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session with id {session_id!r}")
        return int(row[0])

    def _update_session(self, session_id: str, assignment: str, values: tuple[object, ...]) -> None:
        cursor = self._connection.execute(
            f"UPDATE agent_sessions SET {assignment}, updated_at = ?"  # noqa: S608
            " WHERE id = ? AND deleted_at IS NULL",
            (*values, utc_timestamp(), session_id),
        )
        if cursor.rowcount == 0:
            raise SessionNotFound(f"no session with id {session_id!r}")

    def import_session(
        self, record: AgentSessionRecord, imported: Sequence[SessionMessage]
    ) -> None:
        """Create a session with its messages as given, in one transaction (all or nothing)."""
        self._walks.clear()  # an id purged and imported again: no earlier walk continues
        transfer.import_session(self._connection, record, imported)

    def fork_session(self, source_id: str, at_sequence: int, new_record: AgentSessionRecord) -> int:
        """Copy the visible messages ``<= at_sequence`` into a new session; returns the count."""
        return transfer.fork_session(self._connection, source_id, at_sequence, new_record)

    def export_snapshot(
        self, session_id: str
    ) -> tuple[AgentSessionRecord, list[SessionMessage]] | None:
        """A session's row and visible messages read in one consistent snapshot."""
        return transfer.export_snapshot(self._connection, session_id)

    def restore_session(self, session_id: str) -> None:
        """Undo a soft delete (the session is listed and usable again)."""
        session_ops.restore_session(self._connection, session_id)

    def purge_session(self, session_id: str) -> session_ops.PurgeReport:
        """Erase a session and its delegated children for good (see ``store.session_ops``)."""
        self._walks.clear()
        return session_ops.purge_session(self._connection, session_id)

    def list_artifacts(self, session_id: str) -> list[ArtifactInfo]:
        """The session's stored full tool outputs, oldest first."""
        return session_ops.list_artifacts(self._connection, session_id)

    def record_handoff(
        self,
        session_id: str,
        *,
        child_session_id: str | None,
        from_agent: str,
        to_agent: str,
        reason: str,
        sequence_number: int,
        call_id: str | None,
    ) -> HandoffRecord:
        """Store a handoff (delegation) the session made."""
        return handoffs.record_handoff(
            self._connection,
            session_id=session_id,
            child_session_id=child_session_id,
            from_agent=from_agent,
            to_agent=to_agent,
            reason=reason,
            sequence_number=sequence_number,
            call_id=call_id,
        )

    def list_handoffs(self, session_id: str) -> list[HandoffRecord]:
        """The handoffs a session made, oldest first."""
        return handoffs.list_handoffs(self._connection, session_id)

    def descendants_cost(self, session_id: str) -> int:
        """The spend of every session nested under this one (micro-cents)."""
        return handoffs.descendants_cost(self._connection, session_id)

    def delegation_depth(self, session_id: str) -> int:
        """How many ancestors the session has."""
        return handoffs.depth(self._connection, session_id)

    def rolled_back_turns(self, session_id: str) -> list[RolledBackTurn]:
        """The turns rolled out of the visible transcript (failed or aborted), oldest first."""
        return rollbacks.rolled_back_turns(self._connection, session_id)
