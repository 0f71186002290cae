"""Acting on a session outside a turn: details, notes, restore, purge, artifacts (§2.5).

Each function writes through the store and keeps the in-memory row of a session this process
serves in step, so a later snapshot (and the next turn) sees the change.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from relavium_lsp.contracts.content import TextPart
from relavium_lsp.contracts.events import SessionMessageAppended
from relavium_lsp.contracts.session import AgentSessionRecord, DescriptionSource, SessionMessage
from relavium_lsp.contracts.session_ops import ArtifactInfo
from relavium_lsp.engine.scope import EngineServices
from relavium_lsp.engine.sessions.live import LiveSessions
from relavium_lsp.errors import InvalidInput, SessionBusy, SessionNotFound
from relavium_lsp.store.rows.session_ops import PurgeReport


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


async def append_note(
    services: EngineServices,
    live: LiveSessions,
    session_id: str,
    role: Literal["user", "system"],
    text: str,
) -> SessionMessage:
    """Add a message to the transcript without running a turn.

    A ``user`` note is context the model sees with the next turn (it is not a turn and does
    not count toward ``max_turns``); a ``system`` note is for the record only — like the
    other system rows it is shown in the transcript and never sent to a model.
    """
    if not text.strip():
        raise InvalidInput("the note is empty")
    refuse_while_running(live, session_id, "add the note")
    await live.require_record(session_id)
    message = await services.store.run(
        lambda s: s.append_message(session_id, role, [TextPart(text=text)])
    )
    services.bus.emit(
        session_id, SessionMessageAppended(message_sequence=message.sequence_number, role=role)
    )
    await services.bus.drain(session_id)
    return message


async def restore(services: EngineServices, session_id: str) -> AgentSessionRecord:
    """Bring back a soft-deleted session; returns its row."""
    await services.store.run(lambda s: s.restore_session(session_id))
    record = await services.store.run(lambda s: s.get_session(session_id))
    if record is None:  # purged by another process in between
        raise SessionNotFound(f"no session with id {session_id!r}")
    return record


async def purge(services: EngineServices, live: LiveSessions, session_id: str) -> PurgeReport:
    """Erase a session and its delegated children for good, media blobs included."""
    for served in live:
        if served.busy and session_id in (served.id, served.record.parent_session_id):
            raise SessionBusy(f"session {served.id} is running a turn; abort it first")
    report = await services.store.run(lambda s: s.purge_session(session_id))
    for served in list(live):
        if served.id == session_id or served.record.parent_session_id == session_id:
            live.forget(served.id)
    for handle in report.orphaned_media:
        await asyncio.to_thread(services.media.delete, handle)
    return report


async def list_artifacts(
    services: EngineServices, live: LiveSessions, session_id: str
) -> list[ArtifactInfo]:
    """The stored full tool outputs of a session, oldest first."""
    await live.require_record(session_id)
    return await services.store.run(lambda s: s.list_artifacts(session_id))
