"""``relavium/listTools``: the built-in tools and the MCP servers (with their state)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from relavium_lsp.contracts.wire import ListToolsParams
from relavium_lsp.server import methods
from relavium_lsp.server.features.context import detect_context
from relavium_lsp.server.features.lifecycle import get_engine
from relavium_lsp.server.handlers import Result, register_request

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer


def setup(server: RelaviumServer) -> None:
    """Register ``relavium/listTools``."""
    register_request(server, methods.LIST_TOOLS, ListToolsParams, list_tools)


async def list_tools(ls: RelaviumServer, params: ListToolsParams) -> Result:
    """Built-in tools, then each MCP server's; servers start only when ``start`` asks."""
    engine = await get_engine(ls)
    working_dir = params.working_dir
    if params.session_id is None and working_dir is None:
        working_dir = (await detect_context(ls)).working_dir
    return await engine.list_tools(
        session_id=params.session_id, working_dir=working_dir, start=params.start
    )
