"""The workspace memory requests (``docs/design.md`` §2.6).

Read and replace the document; list the proposals automatic passes left, accept or reject
them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pygls.exceptions import JsonRpcInvalidParams

from relavium_lsp.contracts.memory import (
    DecideMemoryProposalParams,
    MemoryProposals,
    SetWorkspaceMemoryParams,
    WorkspaceMemoryParams,
)
from relavium_lsp.errors import InvalidInput
from relavium_lsp.secret_shapes import text_secret_reason
from relavium_lsp.server import methods
from relavium_lsp.server.features.context import detect_context
from relavium_lsp.server.features.lifecycle import get_engine
from relavium_lsp.server.handlers import Result, register_request

if TYPE_CHECKING:
    from relavium_lsp.engine.api import Engine
    from relavium_lsp.server.core import RelaviumServer


def setup(server: RelaviumServer) -> None:
    """Register the workspace memory requests."""
    register_request(
        server, methods.GET_WORKSPACE_MEMORY, WorkspaceMemoryParams, get_workspace_memory
    )
    register_request(
        server, methods.SET_WORKSPACE_MEMORY, SetWorkspaceMemoryParams, set_workspace_memory
    )
    register_request(
        server, methods.LIST_MEMORY_PROPOSALS, WorkspaceMemoryParams, list_memory_proposals
    )
    register_request(
        server, methods.DECIDE_MEMORY_PROPOSAL, DecideMemoryProposalParams, decide_memory_proposal
    )


async def get_workspace_memory(ls: RelaviumServer, params: WorkspaceMemoryParams) -> Result:
    """The document, its revision and its kept revisions."""
    engine = await get_engine(ls)
    return await engine.memory.read(await _working_dir(ls, engine, params))


async def set_workspace_memory(ls: RelaviumServer, params: SetWorkspaceMemoryParams) -> Result:
    """Replace the document if ``baseRevision`` is still the newest; the result is the new state."""
    reason = text_secret_reason(params.text)
    if reason is not None:
        raise JsonRpcInvalidParams(
            f"invalid params for {methods.SET_WORKSPACE_MEMORY}: text was refused because "
            f"{reason}; the workspace memory is given to every session's model, so it never "
            "holds secrets — keep keys in the keychain or the environment (relavium-lsp keys set)"
        )
    engine = await get_engine(ls)
    working_dir = await _working_dir(ls, engine, params)
    return await engine.memory.write(working_dir, params.text, base_revision=params.base_revision)


async def list_memory_proposals(ls: RelaviumServer, params: WorkspaceMemoryParams) -> Result:
    """The pending proposals of the workspace's automatic passes, each with its diff."""
    engine = await get_engine(ls)
    working_dir = await _working_dir(ls, engine, params)
    return MemoryProposals(proposals=await engine.memory.proposals(working_dir))


async def decide_memory_proposal(ls: RelaviumServer, params: DecideMemoryProposalParams) -> Result:
    """Accept (merge into the document) or reject a proposal."""
    engine = await get_engine(ls)
    return await engine.memory.decide(params.proposal_id, params.decision)


async def _working_dir(ls: RelaviumServer, engine: Engine, params: WorkspaceMemoryParams) -> str:
    """The session's workspace, else the given folder, else the one the server detects."""
    if params.session_id is not None:
        return (await engine.record(params.session_id)).context.working_dir
    if params.working_dir is not None:
        if not Path(params.working_dir).is_dir():
            raise InvalidInput(f"workingDir {params.working_dir!r} is not a directory")
        return params.working_dir
    return (await detect_context(ls)).working_dir
