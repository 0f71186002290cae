"""Merging ``[introspection]`` (``docs/design.md`` §2.5): project wins per field, with one limit.

Automatic passes are model calls the user pays for, so a cloned repository's ``project.toml``
may switch them off but cannot switch on what the user's own ``config.toml`` switched off,
and only the user's own file may allow idle passes on paid providers. Such project values are
ignored with a warning, like a looser ``[chat]`` value (:mod:`relavium_lsp.config.merge`).
"""

from __future__ import annotations

import logging
from typing import Any

from relavium_lsp.contracts.introspection_config import (
    EffectiveIntrospection,
    IntrospectionConfig,
)

_log = logging.getLogger(__name__)
# Switches a project file may turn off but not on against the user's own file.
_USER_SWITCHES = ("enabled", "on_new_session")


def merge_introspection(
    global_table: IntrospectionConfig, project_table: IntrospectionConfig
) -> EffectiveIntrospection:
    """The effective ``[introspection]`` values: project, then global, then defaults."""
    values: dict[str, Any] = {}
    for name in IntrospectionConfig.model_fields:
        project_value = getattr(project_table, name)
        value = project_value if project_value is not None else getattr(global_table, name)
        if value is not None:
            values[name] = value
    for name in _USER_SWITCHES:
        if _turns_on(project_table, global_table, name):
            _ignored(name)
            values[name] = False
    if project_table.idle_on_paid_providers and not global_table.idle_on_paid_providers:
        _ignored("idle_on_paid_providers")
        values["idle_on_paid_providers"] = False
    return EffectiveIntrospection.model_validate(values)


def _turns_on(
    project_table: IntrospectionConfig, global_table: IntrospectionConfig, name: str
) -> bool:
    """Whether the project switches on what the user's own file switched off."""
    return getattr(project_table, name) is True and getattr(global_table, name) is False


def _ignored(field: str) -> None:
    _log.warning(
        "project.toml sets [introspection].%s = true, which your own configuration does not "
        "allow; ignored (set it in ~/.relavium/config.toml to allow it)",
        field,
    )
