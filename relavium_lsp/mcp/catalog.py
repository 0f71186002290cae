"""``relavium/listTools``: built-in tools and every MCP server with its state and tools."""

from __future__ import annotations

from collections.abc import Sequence

from relavium_lsp.contracts.wire import ListToolsResult, McpServerInfo, ToolInfo
from relavium_lsp.llm.seam import ToolSpec
from relavium_lsp.mcp.source import McpToolSource, ServerReport

MAX_DESCRIPTION = 500


async def list_tools(
    builtins: Sequence[ToolSpec],
    source: McpToolSource | None,
    *,
    session_id: str | None,
    working_dir: str | None,
    start: bool,
) -> ListToolsResult:
    """What a session (or workspace) can use; ``start`` lists idle trusted servers' tools."""
    tools = [
        ToolInfo(name=spec.name, description=spec.description[:MAX_DESCRIPTION], source="builtin")
        for spec in builtins
    ]
    reports = (
        await source.report(session_id, working_dir, start=start) if source is not None else []
    )
    for report in reports:
        tools.extend(
            ToolInfo(
                name=name,
                description=description[:MAX_DESCRIPTION],
                source="mcp",
                server=report.definition.name,
                server_tool=tool_name,
                read_only=read_only,
            )
            for name, tool_name, description, read_only in report.tools
        )
    return ListToolsResult(tools=tools, servers=[_server_info(report) for report in reports])


def _server_info(report: ServerReport) -> McpServerInfo:
    definition = report.definition
    return McpServerInfo(
        name=definition.name,
        origin=definition.origin,
        transport=definition.transport,
        target=definition.describe(),
        trusted=report.trusted,
        state=report.status.state,
        error=report.status.error,
        tool_count=len(report.tools),
    )
