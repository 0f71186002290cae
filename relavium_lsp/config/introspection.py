"""Merging ``[introspection]`` (``docs/design.md`` §2.5): the project no looser than the user.

Automatic passes are model calls the user pays for, so a cloned repository's ``project.toml``
may switch them off or make them rarer, but not switch on what the user's own ``config.toml``
(or the default) switched off, run them more often, or allow idle passes on paid providers
(:mod:`relavium_lsp.config.trust`).
"""

from __future__ import annotations

from typing import Any

from relavium_lsp.config.trust import tighten
from relavium_lsp.contracts.introspection_config import (
    EffectiveIntrospection,
    IntrospectionConfig,
)


def merge_introspection(
    global_table: IntrospectionConfig, project_table: IntrospectionConfig
) -> EffectiveIntrospection:
    """The effective ``[introspection]`` values: project (no looser), global, defaults."""
    defaults = EffectiveIntrospection()
    values: dict[str, Any] = {}
    for name in IntrospectionConfig.model_fields:
        mine = getattr(global_table, name)
        own = mine if mine is not None else getattr(defaults, name)
        values[name] = tighten("introspection", name, own, getattr(project_table, name))
    return EffectiveIntrospection.model_validate(values)
