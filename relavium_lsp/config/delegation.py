"""Merging the ``[delegation]`` blocks of ``config.toml`` and ``project.toml`` (§8).

Per field, the project's value as far as it is no looser than the user's own
(:mod:`relavium_lsp.config.trust`: a deeper or wider tree of sessions, or more of the
conversation handed to a child, is the user's to allow — ``max_depth = 16`` in a cloned
repository's file stays at the user's 2). Each agent's table is merged the same way against
what the user's own files give that agent, so a project's per-agent table cannot loosen
either.
"""

from __future__ import annotations

from typing import Any

from relavium_lsp.config.trust import tighten
from relavium_lsp.contracts.delegation import (
    DelegationConfig,
    DelegationLimits,
    DelegationLimitsConfig,
    EffectiveDelegation,
)


def _over(base: DelegationLimits, *tables: DelegationLimitsConfig | None) -> dict[str, Any]:
    """``base``'s values, each replaced by the first table (in order) that sets it."""
    values = base.model_dump()
    for name in values:
        for table in tables:
            if table is not None and getattr(table, name) is not None:
                values[name] = getattr(table, name)
                break
    return values


def _tightened(own: dict[str, Any], *project: DelegationLimitsConfig | None) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, mine in own.items():
        theirs = next(
            (getattr(t, name) for t in project if t is not None and getattr(t, name) is not None),
            None,
        )
        values[name] = tighten("delegation", name, mine, theirs)
    return values


def merge_delegation(
    global_block: DelegationConfig, project_block: DelegationConfig
) -> EffectiveDelegation:
    """The block and every agent's table: the project's values no looser than the user's."""
    own_block = _over(DelegationLimits(), global_block)
    limits = DelegationLimits.model_validate(_tightened(own_block, project_block))
    agents: dict[str, DelegationLimitsConfig] = {}
    for agent_id in dict.fromkeys([*global_block.agents, *project_block.agents]):
        own = _over(DelegationLimits(), global_block.agents.get(agent_id), global_block)
        merged = _tightened(own, project_block.agents.get(agent_id), project_block)
        agents[agent_id] = DelegationLimitsConfig.model_validate(merged)
    return EffectiveDelegation(limits=limits, agents=agents)
