"""Changing a session's details outside a turn: description, metadata, notes (§2.5).

Each function writes through the store and keeps the in-memory row of a session this process
serves in step, so a later snapshot (and the next turn) sees the change.
"""

from __future__ import annotations

from typing import Any

from relavium_lsp.contracts.session import AgentSessionRecord, DescriptionSource
from relavium_lsp.engine.live import LiveSessions
from relavium_lsp.engine.scope import EngineServices
from relavium_lsp.errors import SessionBusy


class Keep:
    """The "leave it as it is" value of an optional update (``None`` means clear)."""


KEEP = Keep()


async def update_details(
    services: EngineServices,
    live: LiveSessions,
    session_id: str,
    *,
    description: str | Keep | None = KEEP,
    description_source: DescriptionSource = "user",
    metadata: dict[str, Any] | Keep | None = KEEP,
) -> AgentSessionRecord:
    """Set the description and/or metadata that were given; returns the row as it is now."""
    await live.require_record(session_id)
    if not isinstance(description, Keep):
        text = description
        await services.store.run(lambda s: s.set_description(session_id, text, description_source))
    if not isinstance(metadata, Keep):
        value = metadata
        await services.store.run(lambda s: s.set_metadata(session_id, value))
    record = await live.require_record(session_id)
    served = live.served(session_id)
    if served is not None:
        served.record = served.record.model_copy(
            update={
                "description": record.description,
                "description_source": record.description_source,
                "metadata": record.metadata,
                "updated_at": record.updated_at,
            }
        )
        return served.record
    return record


def refuse_while_running(live: LiveSessions, session_id: str, what: str) -> None:
    """Raise :class:`SessionBusy` when this process runs a turn of the session."""
    served = live.served(session_id)
    if served is not None and served.busy:
        raise SessionBusy(f"session {session_id} is running a turn; {what} it afterwards")
