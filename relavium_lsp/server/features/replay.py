"""``relavium/replaySession`` and ``relavium/listReplays`` (``docs/design.md`` §9, seed 004).

A replay runs into a new session of this history, so the editor follows it like any chat: the
answer names the replay session as soon as it exists (its turns stream as
``relavium/sessionEvent`` notifications and ``session:replay_completed`` ends it), or — with
``wait: true`` — once it has finished, with the report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from relavium_lsp.contracts.replay import (
    ListReplaysResult,
    ReplaySessionParams,
    ReplaySessionResult,
)
from relavium_lsp.contracts.wire import SessionRefParams
from relavium_lsp.server import methods
from relavium_lsp.server.features.lifecycle import get_engine
from relavium_lsp.server.handlers import Result, register_request

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer


def setup(server: RelaviumServer) -> None:
    """Register the replay requests."""
    register_request(server, methods.REPLAY_SESSION, ReplaySessionParams, replay_session)
    register_request(server, methods.LIST_REPLAYS, SessionRefParams, list_replays)


async def replay_session(ls: RelaviumServer, params: ReplaySessionParams) -> Result:
    """Start a replay into a new session; with ``wait`` answer when it has finished."""
    engine = await get_engine(ls)
    started = await engine.start_replay(
        params.session_id, mode=params.tool_replay_mode, live_tools=params.live_tools or ()
    )
    report = await started.task if params.wait else None
    return ReplaySessionResult(
        replay_session_id=started.replay_session_id,
        turns_to_replay=started.turns_to_replay,
        report=report,
    )


async def list_replays(ls: RelaviumServer, params: SessionRefParams) -> Result:
    """The replays of a session (and the one that made it, for a replay session)."""
    replays = await (await get_engine(ls)).list_replays(params.session_id)
    return ListReplaysResult(replays=replays)
