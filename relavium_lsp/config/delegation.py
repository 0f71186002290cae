"""Merging the ``[delegation]`` blocks of ``config.toml`` and ``project.toml`` (§8).

Delegation limits are resource limits, not trust: the project wins per field like ``[chat]``'s
``max_turns`` (the money a delegation may spend is bounded by the cost cap, whose own merge
keeps the lower of the two values).
"""

from __future__ import annotations

from relavium_lsp.contracts.delegation import (
    DelegationConfig,
    DelegationLimits,
    DelegationLimitsConfig,
    EffectiveDelegation,
)


def merge_delegation(
    global_block: DelegationConfig, project_block: DelegationConfig
) -> EffectiveDelegation:
    """Project over global per field, for the block and for each agent's table."""
    limits: dict[str, object] = {}
    for name in DelegationLimits.model_fields:
        for layer in (project_block, global_block):
            value = getattr(layer, name)
            if value is not None:
                limits[name] = value
                break
    agents: dict[str, DelegationLimitsConfig] = {}
    for agent_id in [*global_block.agents, *project_block.agents]:
        fields: dict[str, object] = {}
        for layer in (global_block, project_block):
            table = layer.agents.get(agent_id)
            if table is not None:
                fields.update({name: getattr(table, name) for name in table.model_fields_set})
        agents[agent_id] = DelegationLimitsConfig.model_validate(fields)
    return EffectiveDelegation(limits=DelegationLimits.model_validate(limits), agents=agents)
