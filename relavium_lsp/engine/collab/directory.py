"""What delegation and peer messages use of the sessions this process serves.

:class:`SessionDirectory` is the part of ``sessions/live.py: LiveSessions`` the collaboration
modules reach — find, load and create sessions, read a workspace's configuration — so that
they depend on this small Protocol, not on the object that builds them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from relavium_lsp.config import WorkspaceConfig
    from relavium_lsp.contracts.session import (
        AgentSessionRecord,
        SessionContext,
        SessionSource,
    )
    from relavium_lsp.engine.sessions.session import AgentSession
    from relavium_lsp.store.rows.leases import Lease


class SessionDirectory(Protocol):
    """The sessions of one engine, as collaboration between them sees them."""

    def served(self, session_id: str) -> AgentSession | None:
        """The live session for an id, if this process serves it (nothing is loaded)."""
        ...

    async def get(self, session_id: str) -> AgentSession:
        """The live session for an id, loading it if needed."""
        ...

    async def require_record(self, session_id: str) -> AgentSessionRecord:
        """A session's stored row (``SessionNotFound`` when there is none)."""
        ...

    async def running_elsewhere(self, session_id: str) -> Lease | None:
        """The lease another process holds on the session right now, if any."""
        ...

    async def workspace_config(self, working_dir: str | None) -> WorkspaceConfig:
        """The merged configuration for a workspace."""
        ...

    async def create(
        self,
        *,
        context: SessionContext,
        agent_ref: str | None,
        title: str | None,
        source: SessionSource,
        parent_session_id: str | None = None,
        cost_cap: int | None = None,
    ) -> AgentSession:
        """Open a new session (a delegated child names its parent and spending cap)."""
        ...
