"""Checkpoints, rewind and the review of a turn's changes (§6.3, §6.4).

``relavium/listCheckpoints``, ``relavium/rewind``, ``relavium/undoRewind``,
``relavium/turnChanges``, ``relavium/checkpointContent`` and ``relavium/reviewChanges``.

Files go back through the editor host, so an LSP client receives them as
``workspace/applyEdit`` (undoable; open buffers edited, not the disk behind them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from relavium_lsp.contracts.review import (
    CheckpointContentParams,
    ReviewChangesParams,
    TurnChangesParams,
)
from relavium_lsp.contracts.rewind import (
    ListCheckpointsParams,
    ListCheckpointsResult,
    RewindParams,
    UndoRewindParams,
)
from relavium_lsp.server import methods
from relavium_lsp.server.features.lifecycle import get_engine
from relavium_lsp.server.handlers import Result, register_request

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer


def setup(server: RelaviumServer) -> None:
    """Register the checkpoint and rewind requests."""
    register_request(server, methods.LIST_CHECKPOINTS, ListCheckpointsParams, list_checkpoints)
    register_request(server, methods.REWIND, RewindParams, rewind)
    register_request(server, methods.UNDO_REWIND, UndoRewindParams, undo_rewind)
    register_request(server, methods.TURN_CHANGES, TurnChangesParams, turn_changes)
    register_request(
        server, methods.CHECKPOINT_CONTENT, CheckpointContentParams, checkpoint_content
    )
    register_request(server, methods.REVIEW_CHANGES, ReviewChangesParams, review_changes)


async def list_checkpoints(ls: RelaviumServer, params: ListCheckpointsParams) -> Result:
    """The session's file checkpoints, one per turn that changed files."""
    engine = await get_engine(ls)
    return ListCheckpointsResult(checkpoints=await engine.list_checkpoints(params.session_id))


async def rewind(ls: RelaviumServer, params: RewindParams) -> Result:
    """Rewind files and/or the conversation to before a turn."""
    engine = await get_engine(ls)
    return await engine.rewind(
        params.session_id,
        params.to_sequence,
        files=params.files,
        conversation=params.conversation,
        paths=params.paths,
    )


async def undo_rewind(ls: RelaviumServer, params: UndoRewindParams) -> Result:
    """Put back what a rewind replaced."""
    engine = await get_engine(ls)
    return await engine.undo_rewind(params.session_id, params.rewind_id)


async def turn_changes(ls: RelaviumServer, params: TurnChangesParams) -> Result:
    """The files a turn changed, with line counts and their review."""
    engine = await get_engine(ls)
    return await engine.turn_changes(params.session_id, params.user_sequence)


async def checkpoint_content(ls: RelaviumServer, params: CheckpointContentParams) -> Result:
    """A file's text before a turn changed it."""
    engine = await get_engine(ls)
    return await engine.checkpoint_content(params.session_id, params.user_sequence, params.path)


async def review_changes(ls: RelaviumServer, params: ReviewChangesParams) -> Result:
    """Keep or undo files a turn changed."""
    engine = await get_engine(ls)
    return await engine.review_changes(
        params.session_id, params.user_sequence, params.decision, params.paths
    )
