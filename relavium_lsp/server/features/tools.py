"""``relavium/listTools``: the built-in tools and the MCP servers (with their state)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from relavium_lsp.contracts.wire import ListToolsParams
from relavium_lsp.mcp.catalog import list_tools
from relavium_lsp.server import methods
from relavium_lsp.server.features.context import detect_context
from relavium_lsp.server.features.lifecycle import runtime
from relavium_lsp.server.handlers import Result, register_request

if TYPE_CHECKING:
    from relavium_lsp.server.app import RelaviumServer


def setup(server: RelaviumServer) -> None:
    """Register ``relavium/listTools``."""
    register_request(server, methods.LIST_TOOLS, ListToolsParams, list_session_tools)


async def list_session_tools(ls: RelaviumServer, params: ListToolsParams) -> Result:
    """Built-in tools, then each MCP server's; servers start only when ``start`` asks."""
    rt = await runtime(ls)
    if params.session_id is not None:
        working_dir = (await rt.manager.get_record(params.session_id)).context.working_dir
    elif params.working_dir is not None:
        working_dir = params.working_dir
    else:
        working_dir = (await detect_context(ls)).working_dir
    return await list_tools(
        rt.builtin_tools(),
        rt.mcp,
        session_id=params.session_id,
        working_dir=working_dir,
        start=params.start,
    )
