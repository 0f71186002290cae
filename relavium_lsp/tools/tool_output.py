"""``read_tool_output``: page through the full output of an earlier, bounded tool result.

When a result is cut, the marker names an artifact id; this tool returns ``limit`` lines
from line ``offset`` (0-based: the number of lines to skip). Only artifacts of the calling
session can be read. Its own page is cut at the result byte cap rather than saved again.
"""

from __future__ import annotations

from pydantic import Field

from relavium_lsp.errors import ToolError
from relavium_lsp.tools.base import PreparedCall, ToolArgs, ToolCallContext, ToolDefinition, ToolRun
from relavium_lsp.tools.bounding import MAX_RESULT_BYTES, truncate_bytes

DEFAULT_PAGE_LINES = 500
_FOOTER_RESERVE = 300


class ReadToolOutputArgs(ToolArgs):
    """Arguments of ``read_tool_output``."""

    artifact_id: str = Field(min_length=1, max_length=200, description="From the marker line.")
    offset: int = Field(default=0, ge=0, description="Lines to skip (0-based start line).")
    limit: int = Field(default=DEFAULT_PAGE_LINES, ge=1, le=2_000, description="Lines to return.")


def render_page(text: str, artifact_id: str, offset: int, limit: int) -> str:
    """One page of an artifact with a header and a "read on" footer."""
    lines = text.splitlines(keepends=True)
    total = len(lines)
    if offset >= total and total:
        raise ToolError(f"artifact {artifact_id} has only {total:,} lines")
    page = lines[offset : offset + limit]
    end = offset + len(page)
    body, cut = truncate_bytes("".join(page), MAX_RESULT_BYTES - _FOOTER_RESERVE)
    header = f"[artifact {artifact_id}: lines {offset + 1:,}-{end:,} of {total:,}]\n"
    footer = ""
    if cut:
        shown_lines = body.count("\n")
        footer = (
            f"\n[... page cut at {MAX_RESULT_BYTES:,} bytes; continue with offset "
            f"{offset + shown_lines} and a smaller limit ...]"
        )
    elif end < total:
        footer = f"\n[... {total - end:,} more lines; continue with offset {end} ...]"
    return header + body + footer


def tool_output_tools() -> list[ToolDefinition[ReadToolOutputArgs]]:
    """The ``read_tool_output`` companion tool."""

    async def prepare(args: ReadToolOutputArgs, ctx: ToolCallContext) -> PreparedCall:
        async def run() -> ToolRun:
            text = await ctx.artifacts.load_artifact(ctx.session_id, args.artifact_id)
            if text is None:
                raise ToolError(f"there is no artifact {args.artifact_id!r} in this session")
            return ToolRun(render_page(text, args.artifact_id, args.offset, args.limit))

        return PreparedCall(run=run)

    return [
        ToolDefinition(
            name="read_tool_output",
            description=(
                "Read more of a tool output that was cut short: pass the artifactId from the "
                "'omitted' marker and an offset (lines to skip)."
            ),
            args_model=ReadToolOutputArgs,
            side_effect="read",
            replay="read-only",
            prepare=prepare,
            bounded_by_artifact=False,
        )
    ]
