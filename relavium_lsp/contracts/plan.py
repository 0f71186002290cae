"""The agent's plan: a todo list with statuses that ``update_plan`` replaces as a whole.

The plan lives in the session's durable event log as ``agent:plan_updated`` events (the
newest one is the current plan), so it survives a restart and a resume; ACP clients receive it
as the stable ``plan`` session update, editors render it as a checklist, and exports carry the
final plan. The shapes follow ACP's ``PlanEntry`` (content, priority, status).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from relavium_lsp.contracts.base import WireModel

PlanStatus = Literal["pending", "in_progress", "completed"]
PlanPriority = Literal["high", "medium", "low"]
MAX_PLAN_ENTRIES = 50
MAX_ENTRY_CHARS = 500

_MARKS: dict[str, str] = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class PlanEntry(WireModel):
    """One step of the plan."""

    content: str = Field(min_length=1, max_length=MAX_ENTRY_CHARS)
    status: PlanStatus = "pending"
    priority: PlanPriority = "medium"


class AgentPlanUpdated(WireModel):
    """The agent replaced its plan (``entries`` is the whole list; empty clears it)."""

    type: Literal["agent:plan_updated"] = "agent:plan_updated"
    entries: list[PlanEntry] = Field(max_length=MAX_PLAN_ENTRIES)
    explanation: str | None = Field(default=None, max_length=MAX_ENTRY_CHARS)


def plan_checklist(entries: list[PlanEntry]) -> str:
    """The plan as a plain-text checklist (``[x]`` done, ``[~]`` in progress, ``[ ]`` to do)."""
    return "\n".join(f"{_MARKS[entry.status]} {entry.content}" for entry in entries)
