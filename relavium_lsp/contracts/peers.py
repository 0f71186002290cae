"""Sessions working with other sessions (``docs/design.md`` §2.5).

Handoff audit rows, and peer messages between sessions of one workspace.
"""

from __future__ import annotations

from typing import Literal

from relavium_lsp.contracts.base import WireModel

HandoffAuditAction = Literal["resumed", "replayed"]


class HandoffAuditRecord(WireModel):
    """A later use of a handoff: its child resumed in a new process, or a replay of it.

    ``sessionId`` is the session that made the handoff, ``childSessionId`` the child.
    """

    id: str
    session_id: str
    handoff_id: str
    child_session_id: str | None = None
    action: HandoffAuditAction
    detail: str | None = None
    created_at: str
