"""Export, import and fork as engine operations (the documents themselves are ``export/``).

Exporting is two steps so that each surface can put its own act in between:
:func:`render` only reads (one consistent snapshot of the row and its messages) and builds the
text off the event loop; :func:`announce` then records where the export went
(``exportedWorkflowPath`` for workflows) and emits ``session:exported``. A saved
``*.relavium.yaml`` scaffold is recognised by :func:`note_saved_export` and recorded the same way.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence

from pydantic import ValidationError

from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.events import SessionExported
from relavium_lsp.contracts.plan import PlanEntry
from relavium_lsp.contracts.session import AgentSessionRecord, HandoffRecord, SessionMessage
from relavium_lsp.contracts.workflow import ChildSessionExport
from relavium_lsp.engine.history.turn_review import changes_by_turn
from relavium_lsp.engine.scope import EngineServices
from relavium_lsp.engine.sessions.live import LiveSessions
from relavium_lsp.errors import SessionNotFound
from relavium_lsp.export.documents import (
    SAVED_WORKFLOW_SUFFIXES,
    UNTITLED,
    ExportFormat,
    ExportOutcome,
    exported_session_id,
    fork_record,
    render_export,
)
from relavium_lsp.export.jsonl_import import import_jsonl
from relavium_lsp.export.tool_cassette import (
    ToolCassette,
    parse_tool_cassette,
    render_tool_cassette,
)
from relavium_lsp.export.turns import message_text
from relavium_lsp.export.workflow_yaml import ChildExport
from relavium_lsp.store.models import utc_timestamp
from relavium_lsp.store.rows.event_reads import latest_plan, timeline_events
from relavium_lsp.store.rows.peer_messages import list_messages
from relavium_lsp.store.rows.replays import save_tool_cassette, tool_durations
from relavium_lsp.store.sessions import SessionStore


async def full_transcript(
    services: EngineServices, session_id: str
) -> tuple[AgentSessionRecord, list[SessionMessage]]:
    """A session's row and every visible message, read consistently; unknown ids raise."""
    snapshot = await services.store.run(lambda s: s.export_snapshot(session_id))
    if snapshot is None:
        raise SessionNotFound(f"no session with id {session_id!r}")
    return snapshot


async def render(services: EngineServices, session_id: str, fmt: ExportFormat) -> ExportOutcome:
    """Build an export without recording anything (the YAML/JSON work runs in a thread)."""
    record, messages = await full_transcript(services, session_id)
    plan = await current_plan(services, session_id)
    rolled_back = await services.store.run(lambda s: s.rolled_back_turns(session_id))
    handoffs = await services.store.run(lambda s: s.list_handoffs(session_id))
    children = await _children(services, handoffs)
    timeline = await services.store.run(lambda s: timeline_events(s.connection, session_id))
    durations = (
        await services.store.run(lambda s: tool_durations(s.connection, session_id))
        if fmt == "jsonl"
        else None
    )
    peers = await services.store.run(lambda s: list_messages(s.connection, session_id))
    changes = await changes_by_turn(services, record, services.host) if fmt == "markdown" else None
    return await asyncio.to_thread(
        functools.partial(
            render_export,
            record,
            messages,
            fmt,
            plan,
            rolled_back=rolled_back,
            children=children,
            handoffs=handoffs,
            timeline=timeline,
            peer_messages=peers,
            changes=changes,
            tool_durations=durations,
        )
    )


def _snapshot_of(
    session_id: str,
) -> Callable[[SessionStore], tuple[AgentSessionRecord, list[SessionMessage]] | None]:
    return lambda store: store.export_snapshot(session_id)


async def _children(
    services: EngineServices, handoffs: Sequence[HandoffRecord]
) -> list[ChildExport]:
    """The session's delegated children that still exist, in handoff order."""
    found: list[ChildExport] = []
    for handoff in handoffs:
        child_id = handoff.child_session_id
        if child_id is None:
            continue
        snapshot = await services.store.run(_snapshot_of(child_id))
        if snapshot is None:
            continue  # deleted or purged since
        child, messages = snapshot
        task = next((m for m in messages if m.role == "user"), None)
        try:
            agent = AgentDefinition.model_validate(child.agent_snapshot)
        except ValidationError:
            agent = None
        found.append(
            ChildExport(
                export=ChildSessionExport(
                    session_id=child.id,
                    agent_slug=child.agent_slug,
                    from_agent=handoff.from_agent,
                    reason=handoff.reason,
                    sequence_number=handoff.sequence_number,
                    call_id=handoff.call_id,
                    messages=messages,
                ),
                task=message_text(task) if task is not None else "",
                agent=agent,
            )
        )
    return found


async def current_plan(services: EngineServices, session_id: str) -> list[PlanEntry] | None:
    """The session's plan (its newest ``agent:plan_updated``), once emitted events are stored."""
    await services.bus.drain(session_id)
    latest = await services.store.run(lambda s: latest_plan(s.connection, session_id))
    return list(latest.entries) if latest is not None and latest.entries else None


async def announce(
    services: EngineServices,
    live: LiveSessions,
    session_id: str,
    fmt: ExportFormat,
    location: str = UNTITLED,
    tool_cassette: ToolCassette | None = None,
) -> None:
    """Record where an export went and emit ``session:exported``.

    A JSONL export's ``tool_cassette`` is kept in the history, for later replays to read.
    """
    if tool_cassette is not None:
        await store_tool_cassette(services, session_id, tool_cassette)
    if fmt == "workflow":
        await services.store.run(lambda s: s.set_exported_path(session_id, location))
        served = live.served(session_id)
        if served is not None:
            # Keep the in-memory row of a session this process serves in step.
            served.record = served.record.model_copy(update={"exported_workflow_path": location})
    services.bus.emit(session_id, SessionExported(workflow_path=location, format=fmt))
    await services.bus.drain(session_id)


async def note_saved_export(
    services: EngineServices, live: LiveSessions, path: str, text: str
) -> str | None:
    """Note a saved ``*.relavium.yaml`` as its session's export; returns that session's id.

    ``None`` when the file is not an exported scaffold or names no existing session. An
    unchanged path is not recorded (or announced) again.
    """
    if not path.endswith(SAVED_WORKFLOW_SUFFIXES):
        return None
    session_id = await asyncio.to_thread(exported_session_id, text)
    if session_id is None:
        return None
    record = await services.store.run(lambda s: s.get_session(session_id))
    if record is None:
        return None
    if record.exported_workflow_path != path:
        await announce(services, live, session_id, "workflow", path)
    return session_id


async def fork(services: EngineServices, source: AgentSessionRecord, at_sequence: int) -> str:
    """Branch a session at one of its messages; returns the new session's id.

    The fork keeps the agent snapshot, context and source, is titled ``<title> (fork)``, and
    holds copies of the visible messages up to ``at_sequence``; the original is untouched.
    """
    record = fork_record(source)
    await services.store.run(lambda s: s.fork_session(source.id, at_sequence, record))
    return record.id


async def store_tool_cassette(
    services: EngineServices, session_id: str, cassette: ToolCassette
) -> None:
    """Keep a session's tool cassette in the history (replacing the one kept before)."""
    text = await asyncio.to_thread(render_tool_cassette, cassette)
    await services.store.run(
        lambda s: save_tool_cassette(
            s.connection, session_id, text, len(cassette.calls), utc_timestamp()
        )
    )


async def import_transcript(
    services: EngineServices, text: str, tool_cassette: str | None = None
) -> str:
    """Create a new session from a JSONL transcript (validated first; all or nothing).

    Everything the file carries but its peer messages comes back: the visible messages, the
    rolled-back turns, handoffs, checkpoints and progress writes (docs/design.md §9). A tool
    cassette exported beside it is validated too and kept for the new session's replays.
    """
    imported = await asyncio.to_thread(import_jsonl, text)
    cassette = (
        None
        if tool_cassette is None
        else await asyncio.to_thread(parse_tool_cassette, tool_cassette)
    )
    await services.store.run(
        lambda s: s.import_session(
            imported.record,
            imported.messages,
            rolled_back=imported.rolled_back,
            handoffs=imported.handoffs,
            events=imported.events,
        )
    )
    if cassette is not None:
        await store_tool_cassette(services, imported.record.id, cassette)
    return imported.record.id
