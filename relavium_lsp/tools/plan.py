"""``update_plan``: the agent keeps a todo list the user can follow.

Each call replaces the whole plan and emits ``agent:plan_updated``; the event log is where
the plan lives (the newest such event is the session's plan), so it needs no approval, no
path and no process. The model reads the checklist back as the result.
"""

from __future__ import annotations

from pydantic import Field

from relavium_lsp.contracts.plan import (
    MAX_ENTRY_CHARS,
    MAX_PLAN_ENTRIES,
    AgentPlanUpdated,
    PlanEntry,
    PlanPriority,
    PlanStatus,
    plan_checklist,
)
from relavium_lsp.tools.base import PreparedCall, ToolArgs, ToolCallContext, ToolDefinition, ToolRun


class PlanItemArgs(ToolArgs):
    """One step as the model writes it."""

    content: str = Field(min_length=1, max_length=MAX_ENTRY_CHARS, description="The step.")
    status: PlanStatus = Field(
        default="pending", description="'pending', 'in_progress' or 'completed'."
    )
    priority: PlanPriority = Field(default="medium", description="'high', 'medium' or 'low'.")


class UpdatePlanArgs(ToolArgs):
    """Arguments of ``update_plan``."""

    plan: list[PlanItemArgs] = Field(
        max_length=MAX_PLAN_ENTRIES,
        description="The whole plan, in order (replaces the previous one; [] clears it).",
    )
    explanation: str | None = Field(
        default=None, max_length=MAX_ENTRY_CHARS, description="Why the plan changed (optional)."
    )


def plan_tools() -> list[ToolDefinition[UpdatePlanArgs]]:
    """The ``update_plan`` tool."""

    async def prepare(args: UpdatePlanArgs, ctx: ToolCallContext) -> PreparedCall:
        entries = [
            PlanEntry(content=item.content, status=item.status, priority=item.priority)
            for item in args.plan
        ]

        async def run() -> ToolRun:
            ctx.emit(AgentPlanUpdated(entries=entries, explanation=args.explanation))
            if not entries:
                return ToolRun("Plan cleared.")
            done = sum(entry.status == "completed" for entry in entries)
            header = f"Plan updated ({done}/{len(entries)} completed):"
            return ToolRun(f"{header}\n{plan_checklist(entries)}")

        return PreparedCall(run=run)

    return [
        ToolDefinition(
            name="update_plan",
            description=(
                "Keep a short plan the user can follow: send the whole list of steps with "
                "their status (pending, in_progress, completed) whenever it changes. Use it "
                "for tasks of several steps; keep at most one step in_progress."
            ),
            args_model=UpdatePlanArgs,
            side_effect="read",
            replay="pure",
            prepare=prepare,
        )
    ]
