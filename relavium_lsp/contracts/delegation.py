"""The ``[delegation]`` configuration block (``docs/design.md`` §2.5 and §8).

Written in ``config.toml`` and ``project.toml``::

    [delegation]
    max_depth = 2                  # levels of delegation below a top-level session
    max_concurrent_children = 2    # children one parent runs at once

    input_filter = "task_only"     # task_only | last_n | full_history: what a child sees
    input_last_n = 10              # messages for last_n
    strip_tool_results = false     # leave tool results out of what is handed over

    [delegation.agents.lead]       # what the ``lead`` agent may do when it delegates
    max_depth = 1

Every field is optional so that layers merge per field (project over global over the
defaults below, which are what the engine enforced before the block existed). An agent's own
table wins over the block for that agent's delegations.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from relavium_lsp.contracts.agent import KEBAB_ID_PATTERN
from relavium_lsp.contracts.base import AuthoredModel, WireModel

DEFAULT_MAX_DEPTH = 2
DEFAULT_MAX_CONCURRENT_CHILDREN = 2
# Hard ceilings: a configuration cannot ask for a runaway tree of sessions.
MAX_DEPTH_LIMIT = 16
MAX_CONCURRENT_LIMIT = 32

AgentKey = Annotated[str, Field(pattern=KEBAB_ID_PATTERN, max_length=64)]


InputFilterKind = Literal["task_only", "last_n", "full_history"]
MAX_LAST_N = 200
DEFAULT_LAST_N = 10


class HandoffInputFilter(WireModel):
    """What of the delegating session's conversation a child receives beside its task.

    ``task_only`` (the default): the task alone. ``last_n``: the ``lastN`` newest visible
    messages. ``full_history``: every visible message (still within the child's context
    budget like any history). ``stripToolResults`` leaves tool results out (their calls stay,
    named). Recorded in the handoff row.
    """

    kind: InputFilterKind = "task_only"
    last_n: int | None = Field(default=None, ge=1, le=MAX_LAST_N)
    strip_tool_results: bool = False


class DelegationLimitsConfig(AuthoredModel):
    """Limits as written in a file; ``None`` leaves the field to a lower layer.

    ``max_depth = 0`` means the agent may not delegate at all (the ``delegate`` tool refuses
    with that reason).
    """

    max_depth: int | None = Field(default=None, ge=0, le=MAX_DEPTH_LIMIT)
    max_concurrent_children: int | None = Field(default=None, ge=1, le=MAX_CONCURRENT_LIMIT)
    # The handoff input filter a delegation uses unless the call chooses one.
    input_filter: InputFilterKind | None = None
    input_last_n: int | None = Field(default=None, ge=1, le=MAX_LAST_N)
    strip_tool_results: bool | None = None


class DelegationConfig(DelegationLimitsConfig):
    """The ``[delegation]`` block: workspace-wide limits plus per-agent tables."""

    agents: dict[AgentKey, DelegationLimitsConfig] = Field(default_factory=dict)


class DelegationLimits(AuthoredModel):
    """The limits one delegating agent obeys, every default filled in."""

    max_depth: int = DEFAULT_MAX_DEPTH
    max_concurrent_children: int = DEFAULT_MAX_CONCURRENT_CHILDREN
    input_filter: InputFilterKind = "task_only"
    input_last_n: int = DEFAULT_LAST_N
    strip_tool_results: bool = False


class EffectiveDelegation(AuthoredModel):
    """The merged ``[delegation]`` block: workspace limits and per-agent overrides."""

    limits: DelegationLimits = Field(default_factory=DelegationLimits)
    agents: dict[str, DelegationLimitsConfig] = Field(default_factory=dict)

    def for_agent(self, agent_id: str) -> DelegationLimits:
        """What ``agent_id`` may do when it delegates: its own table over the block's."""
        override = self.agents.get(agent_id)
        if override is None:
            return self.limits
        given = {
            name: value
            for name, value in override.model_dump().items()
            if value is not None and name in DelegationLimits.model_fields
        }
        return self.limits.model_copy(update=given)
