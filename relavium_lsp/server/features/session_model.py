"""The session-model requests (``docs/design.md`` §2.5): details, notes, purge, handoffs, peers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from relavium_lsp.contracts.peers import (
    ListPeerMessagesParams,
    ListPeerMessagesResult,
    SendPeerMessageParams,
    SendPeerMessageResult,
)
from relavium_lsp.contracts.session_ops import (
    AppendMessageParams,
    AppendMessageResult,
    CheckpointSessionParams,
    ListArtifactsParams,
    ListArtifactsResult,
    ListHandoffsParams,
    ListHandoffsResult,
    ListIntrospectionsResult,
    PurgeSessionResult,
    UpdateSessionParams,
    UpdateSessionResult,
)
from relavium_lsp.contracts.wire import SessionRefParams
from relavium_lsp.engine.api import KEEP
from relavium_lsp.server import methods
from relavium_lsp.server.features.lifecycle import get_engine
from relavium_lsp.server.handlers import Result, register_request

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer


def setup(server: RelaviumServer) -> None:
    """Register the session-model requests."""
    register_request(server, methods.UPDATE_SESSION, UpdateSessionParams, update_session)
    register_request(server, methods.APPEND_MESSAGE, AppendMessageParams, append_message)
    register_request(server, methods.RESTORE_SESSION, SessionRefParams, restore_session)
    register_request(server, methods.PURGE_SESSION, SessionRefParams, purge_session)
    register_request(server, methods.LIST_ARTIFACTS, ListArtifactsParams, list_artifacts)
    register_request(server, methods.LIST_HANDOFFS, ListHandoffsParams, list_handoffs)
    register_request(server, methods.SEND_PEER_MESSAGE, SendPeerMessageParams, send_peer_message)
    register_request(server, methods.LIST_PEER_MESSAGES, ListPeerMessagesParams, list_peer_messages)
    register_request(
        server, methods.CHECKPOINT_SESSION, CheckpointSessionParams, checkpoint_session
    )
    register_request(server, methods.LIST_INTROSPECTIONS, SessionRefParams, list_introspections)


async def update_session(ls: RelaviumServer, params: UpdateSessionParams) -> Result:
    """Set the description and/or metadata the params carry (``null`` clears)."""
    given = params.model_fields_set
    record = await (await get_engine(ls)).update_details(
        params.session_id,
        description=params.description if "description" in given else KEEP,
        metadata=params.metadata if "metadata" in given else KEEP,
    )
    return UpdateSessionResult(session=record)


async def append_message(ls: RelaviumServer, params: AppendMessageParams) -> Result:
    """Add a user or system note without calling the model."""
    engine = await get_engine(ls)
    message = await engine.append_note(params.session_id, params.role, params.text)
    return AppendMessageResult(message=message)


async def restore_session(ls: RelaviumServer, params: SessionRefParams) -> Result:
    """Undo a soft delete; the result is the session row."""
    record = await (await get_engine(ls)).restore(params.session_id)
    return UpdateSessionResult(session=record)


async def purge_session(ls: RelaviumServer, params: SessionRefParams) -> Result:
    """Erase a session (and its delegated children) for good."""
    report = await (await get_engine(ls)).purge(params.session_id)
    return PurgeSessionResult(
        sessions=report.sessions,
        messages=report.messages,
        media_files=len(report.orphaned_media),
    )


async def list_artifacts(ls: RelaviumServer, params: ListArtifactsParams) -> Result:
    """The session's stored full tool outputs."""
    artifacts = await (await get_engine(ls)).list_artifacts(params.session_id)
    return ListArtifactsResult(artifacts=artifacts)


async def list_handoffs(ls: RelaviumServer, params: ListHandoffsParams) -> Result:
    """The delegations the session made (one agent's, if asked), and their audit rows."""
    engine = await get_engine(ls)
    handoffs = await engine.list_handoffs(
        params.session_id, agent=params.agent, direction=params.direction
    )
    audit = await engine.list_handoff_audit(params.session_id)
    return ListHandoffsResult(handoffs=handoffs, audit=audit)


async def send_peer_message(ls: RelaviumServer, params: SendPeerMessageParams) -> Result:
    """Send a peer message from one session to others; each delivery's outcome."""
    message = await (await get_engine(ls)).send_peer_message(
        params.session_id, params.to_session_ids, params.text, params.mode
    )
    return SendPeerMessageResult(message=message)


async def list_peer_messages(ls: RelaviumServer, params: ListPeerMessagesParams) -> Result:
    """The peer messages a session sent and/or received."""
    messages = await (await get_engine(ls)).list_peer_messages(params.session_id, params.direction)
    return ListPeerMessagesResult(messages=messages)


async def checkpoint_session(ls: RelaviumServer, params: CheckpointSessionParams) -> Result:
    """Run an introspection pass; the result is the ``session:checkpoint`` event's payload."""
    event = await (await get_engine(ls)).checkpoint(params.session_id, params.reason)
    return event.to_wire()


async def list_introspections(ls: RelaviumServer, params: SessionRefParams) -> Result:
    """The session's introspection checkpoints, oldest first."""
    checkpoints = await (await get_engine(ls)).list_introspections(params.session_id)
    return ListIntrospectionsResult(checkpoints=checkpoints)
