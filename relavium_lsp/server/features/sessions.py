"""The session requests (``docs/design.md`` §4): start, send, abort, resume, list, and more."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from relavium_lsp.contracts.session import SessionSource
from relavium_lsp.contracts.wire import (
    AbortTurnParams,
    AbortTurnResult,
    AgentInfo,
    CompactSessionParams,
    EmptyParams,
    GetTranscriptParams,
    GetTranscriptResult,
    ListAgentsResult,
    ListSessionsParams,
    ListSessionsResult,
    RenameSessionParams,
    ResumeSessionResult,
    SendMessageParams,
    SessionEventsParams,
    SessionEventsResult,
    SessionRefParams,
    StartSessionParams,
    StartSessionResult,
)
from relavium_lsp.errors import InvalidInput
from relavium_lsp.secret_shapes import secret_reason
from relavium_lsp.server import methods
from relavium_lsp.server.features.commands import register_command
from relavium_lsp.server.features.context import detect_context
from relavium_lsp.server.features.lifecycle import get_engine
from relavium_lsp.server.features.turns import TurnRequest, run_turn, start_turn
from relavium_lsp.server.handlers import Result, register_request

if TYPE_CHECKING:
    from relavium_lsp.engine.api import SessionSnapshot
    from relavium_lsp.server.core import RelaviumServer

# A filtered read scans the log in pages; it stops after this many (a very long session's
# oldest events are then left out rather than holding the server).
_FILTER_PAGE = 1000
_MAX_FILTERED_PAGES = 200
_KNOWN_SOURCES = {"code": "vscode", "vscode": "vscode", "neovim": "neovim", "nvim": "neovim"}


def setup(server: RelaviumServer) -> None:
    """Register every session request."""
    register_request(server, methods.START_SESSION, StartSessionParams, start_session)
    register_request(server, methods.SEND_MESSAGE, SendMessageParams, send_message)
    register_command(
        server, methods.command_name(methods.SEND_MESSAGE), SendMessageParams, send_message_command
    )
    register_request(server, methods.ABORT_TURN, AbortTurnParams, abort_turn)
    register_request(server, methods.CANCEL_SESSION, SessionRefParams, cancel_session)
    register_request(server, methods.RESUME_SESSION, SessionRefParams, resume_session)
    register_request(server, methods.LIST_SESSIONS, ListSessionsParams, list_sessions)
    register_request(server, methods.GET_TRANSCRIPT, GetTranscriptParams, get_transcript)
    register_request(server, methods.SESSION_EVENTS, SessionEventsParams, session_events)
    register_request(server, methods.RENAME_SESSION, RenameSessionParams, rename_session)
    register_request(server, methods.DELETE_SESSION, SessionRefParams, delete_session)
    register_request(server, methods.COMPACT_SESSION, CompactSessionParams, compact_session)
    register_request(server, methods.LIST_AGENTS, EmptyParams, list_agents)


async def start_session(ls: RelaviumServer, params: StartSessionParams) -> Result:
    """Reopen the session ``sessionId`` names, else open one in the detected context."""
    if params.session_id is not None:
        engine = await get_engine(ls)
        session = await engine.reopen(params.session_id, metadata=params.metadata)
    else:
        session = await open_session(ls, params)
    return StartSessionResult(
        session_id=session.id,
        agent_ref=session.agent.id,
        model=session.model,
        context=session.record.context,
        status=session.record.status,
        created=params.session_id is None,
    )


async def open_session(ls: RelaviumServer, params: StartSessionParams) -> SessionSnapshot:
    """A new session in the detected context with the request's overrides."""
    engine = await get_engine(ls)  # opened first: the database key is known from then on
    refuse_secret_variables(params.context.variables if params.context else None)
    detected = await detect_context(ls)
    context = params.context.apply_to(detected) if params.context else detected
    if not Path(context.working_dir).is_dir():
        raise InvalidInput(f"workingDir {context.working_dir!r} is not a directory")
    return await engine.start(
        context=context,
        agent_ref=params.agent_ref or ls.state.options.default_agent,
        title=params.title,
        source=requested_source(ls, params.source),
        description=params.description,
        metadata=params.metadata,
        allow_broad_working_dir=params.allow_broad_working_dir,
    )


def refuse_secret_variables(variables: dict[str, str] | None) -> None:
    """InvalidParams for a context variable holding a secret; the value is never echoed.

    Variables are stored in plain, echoed in the result and ``session:started``, and
    exported — no place for an API key (see :mod:`relavium_lsp.secret_shapes`).
    """
    for name, value in (variables or {}).items():
        reason = secret_reason(value)
        if reason is not None:
            raise JsonRpcInvalidParams(
                f"invalid params for {methods.START_SESSION}: context.variables.{name} was "
                f"refused because {reason}; secrets are never stored as context — keep keys "
                "in the keychain or the environment (relavium-lsp keys set)"
            )


async def send_message(ls: RelaviumServer, params: SendMessageParams) -> Result:
    """Run one turn: answer when it settles, or at once with ``wait: false`` (see turns)."""
    return await _send(ls, params, wait=params.wait is not False, announce=False)


async def send_message_command(ls: RelaviumServer, params: SendMessageParams) -> Result:
    """``relavium.sendMessage``: does not wait unless asked; a plain client sees the answer."""
    return await _send(ls, params, wait=params.wait is True, announce=True)


async def _send(
    ls: RelaviumServer, params: SendMessageParams, *, wait: bool, announce: bool
) -> Result:
    request = TurnRequest(
        session_id=params.session_id,
        text=params.text,
        attachments=params.attachments or [],
        progress_token=params.work_done_token,
        announce=announce,
    )
    if wait:
        return await run_turn(ls, request)
    return await start_turn(ls, request)


async def abort_turn(ls: RelaviumServer, params: AbortTurnParams) -> Result:
    """Abort the running turn, if any."""
    engine = await get_engine(ls)
    return AbortTurnResult(aborted=await engine.abort(params.session_id))


async def cancel_session(ls: RelaviumServer, params: SessionRefParams) -> Result:
    """End the session."""
    await (await get_engine(ls)).cancel(params.session_id)
    return {}


async def resume_session(ls: RelaviumServer, params: SessionRefParams) -> Result:
    """Reload a session with the history tail that fits its model's context."""
    resumed = await (await get_engine(ls)).resume(params.session_id)
    return ResumeSessionResult(
        session=resumed.session,
        messages=resumed.messages,
        last_event_sequence=resumed.last_event_sequence,
        plan=resumed.plan,
    )


async def list_sessions(ls: RelaviumServer, params: ListSessionsParams) -> Result:
    """Sessions newest first, filtered and paged."""
    page = await (await get_engine(ls)).list_sessions(
        workspace=params.workspace,
        status=params.status,
        query=params.query,
        limit=params.limit,
        cursor=params.cursor,
        deleted=params.deleted,
    )
    return ListSessionsResult(sessions=page.sessions, next_cursor=page.next_cursor)


async def get_transcript(ls: RelaviumServer, params: GetTranscriptParams) -> Result:
    """A page of the transcript, oldest first."""
    messages, has_more = await (await get_engine(ls)).transcript(
        params.session_id,
        before_sequence=params.before_sequence,
        limit=params.limit,
        agent_slug=params.agent_slug,
    )
    return GetTranscriptResult(messages=messages, has_more=has_more)


async def session_events(ls: RelaviumServer, params: SessionEventsParams) -> Result:
    """The durable event backlog after a sequence number (of some types only, if asked)."""
    engine = await get_engine(ls)
    if params.types is None:
        events = await engine.events_after(params.session_id, params.after_sequence, params.limit)
        return SessionEventsResult(events=[event.to_wire() for event in events])
    wanted = set(params.types)
    kept: list[dict[str, Any]] = []
    after = params.after_sequence
    for _ in range(_MAX_FILTERED_PAGES):
        page = await engine.events_after(params.session_id, after, _FILTER_PAGE)
        for event in page:
            wire = event.to_wire()
            if wire.get("type") in wanted:
                kept.append(wire)
        if len(page) < _FILTER_PAGE or len(kept) >= params.limit:
            break
        after = page[-1].sequence_number
    return SessionEventsResult(events=kept[: params.limit])


async def rename_session(ls: RelaviumServer, params: RenameSessionParams) -> Result:
    """Set the title."""
    await (await get_engine(ls)).rename(params.session_id, params.title)
    return {}


async def delete_session(ls: RelaviumServer, params: SessionRefParams) -> Result:
    """Soft-delete."""
    await (await get_engine(ls)).delete(params.session_id)
    return {}


async def compact_session(ls: RelaviumServer, params: CompactSessionParams) -> Result:
    """Compact now; the result is the terminal compaction event's payload."""
    event = await (await get_engine(ls)).compact(params.session_id, mode=params.mode)
    return event.to_wire()


async def list_agents(ls: RelaviumServer, params: EmptyParams) -> Result:
    """The agents available in the active workspace (always including the default)."""
    engine = await get_engine(ls)
    context = await detect_context(ls)
    agents = await engine.list_agents(context.working_dir)
    return ListAgentsResult(
        agents=[
            AgentInfo(
                id=agent.id,
                name=agent.name,
                description=agent.description,
                model=agent.model,
                provider=agent.provider,
            )
            for agent in agents
        ]
    )


def requested_source(ls: RelaviumServer, given: SessionSource | str | None) -> SessionSource:
    """The source a start request gives (a plain string is its kind), else the client's."""
    if isinstance(given, SessionSource):
        return given
    if given is not None:
        return SessionSource.of_kind(given)
    return client_source(ls)


def client_source(ls: RelaviumServer) -> SessionSource:
    """Who opened the session: from initializationOptions.clientName, else clientInfo.

    The kind is ``vscode``, ``neovim`` or the client's name in short; ``platform`` is the
    program's own name as it reported it.
    """
    name = ls.state.options.client_name or ls.state.client_info_name or "lsp"
    platform = ls.state.client_info_name[:100] if ls.state.client_info_name else None
    lowered = name.lower()
    kind = next((source for marker, source in _KNOWN_SOURCES.items() if marker in lowered), None)
    if kind is None:
        kind = "".join(ch for ch in lowered if ch.isalnum() or ch in "-_")[:32] or "lsp"
    return SessionSource(kind=kind, interactive=True, platform=platform)
