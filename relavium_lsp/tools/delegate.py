"""``delegate``: hand a task to another agent of the workspace in a child session (§2.5).

The tool is an ordinary entry of an agent's ``tools`` list, so which agents may delegate is
configured per agent. The work happens in the engine (``ToolCallContext.delegator``): a child
session runs the task as its first turn, and its final answer is this tool's result. The
limits (depth, concurrent children, the parent's cost cap) are the engine's.
"""

from __future__ import annotations

from pydantic import Field

from relavium_lsp.contracts.delegation import MAX_LAST_N, InputFilterKind
from relavium_lsp.errors import ToolError
from relavium_lsp.tools.base import (
    DelegationRequest,
    PreparedCall,
    ToolArgs,
    ToolCallContext,
    ToolDefinition,
    ToolRun,
)

DELEGATE_TOOL = "delegate"


class DelegateArgs(ToolArgs):
    """Arguments of ``delegate``."""

    agent: str = Field(
        min_length=1, max_length=64, description="The id of the agent to hand the task to."
    )
    task: str = Field(
        min_length=1,
        max_length=20_000,
        description=(
            "The complete task for that agent: it sees nothing else of this chat unless "
            "input_filter hands some over."
        ),
    )
    reason: str = Field(default="", max_length=500, description="Why this agent, in a line.")
    input_filter: InputFilterKind | None = Field(
        default=None,
        description=(
            "What of this conversation the agent also receives: task_only (the task alone), "
            "last_n (the newest last_n messages) or full_history. Default: configured."
        ),
    )
    last_n: int | None = Field(
        default=None, ge=1, le=MAX_LAST_N, description="How many messages last_n hands over."
    )
    strip_tool_results: bool | None = Field(
        default=None, description="Leave tool results out of what is handed over."
    )


def delegate_tools() -> list[ToolDefinition[DelegateArgs]]:
    """The ``delegate`` tool."""

    async def prepare(args: DelegateArgs, ctx: ToolCallContext) -> PreparedCall:
        delegator = ctx.delegator
        if delegator is None:
            raise ToolError("delegation is not available in this session")

        async def run() -> ToolRun:
            outcome = await delegator.delegate(
                DelegationRequest(
                    agent=args.agent,
                    task=args.task,
                    reason=args.reason,
                    input_filter=args.input_filter,
                    last_n=args.last_n,
                    strip_tool_results=args.strip_tool_results,
                )
            )
            return ToolRun(
                outcome.text,
                failed=outcome.failed,
                error_code="tool_failed" if outcome.failed else None,
            )

        return PreparedCall(run=run)

    return [
        ToolDefinition(
            name=DELEGATE_TOOL,
            description=(
                "Hand a self-contained task to another agent of this workspace. It works in "
                "its own session and its final answer comes back as this tool's result."
            ),
            args_model=DelegateArgs,
            side_effect="egress",
            replay="side-effecting",
            prepare=prepare,
        )
    ]
