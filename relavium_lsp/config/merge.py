"""Layering global and project configuration (``docs/design.md`` §8): project wins per field.

Two exceptions to per-field merging:

- ``allowed_commands`` and ``allowed_command_globs`` are a single allowlist. If a layer sets
  either, both come from that layer (the unset one as an empty list), so a project that
  narrows ``allowed_commands`` cannot silently inherit broad globs from the global file.
- **A project file can tighten trust, never loosen it.** A repository you clone is not you:
  its ``project.toml`` may make ``approval`` stricter, narrow ``fs_scope`` or lower the cost
  cap, but anything looser (``never_ask``, a wider scope tier, extra ``allowed_paths`` beyond
  what your own global config already permits, disk-write fallback) has to come from your
  global config or editor settings; a looser project value is ignored with a warning.
"""

from __future__ import annotations

import logging
from typing import Any

from relavium_lsp.contracts.config import (
    ChatConfig,
    EffectiveChatPolicy,
    GlobalConfigFile,
    ProjectConfigFile,
    ProviderConfig,
)
from relavium_lsp.contracts.presets import PROVIDER_PRESETS

COMMAND_ALLOWLIST_FIELDS = ("allowed_commands", "allowed_command_globs")
# From least to most permissive.
APPROVAL_ORDER = ("ask", "auto_edits", "never_ask")
SCOPE_ORDER = ("sandboxed", "project", "full")
_log = logging.getLogger(__name__)
# Provider ids whose ``kind`` defaults to the id itself.
SELF_NAMED_KINDS = ("openai", "anthropic")


def merge_policy(
    global_chat: ChatConfig, project_chat: ChatConfig, *, default_model: str | None
) -> EffectiveChatPolicy:
    """The effective ``[chat]`` policy: project, then global, then built-in defaults."""
    values: dict[str, Any] = {}
    for name in EffectiveChatPolicy.model_fields:
        if name in COMMAND_ALLOWLIST_FIELDS or name not in ChatConfig.model_fields:
            continue
        project_value = getattr(project_chat, name)
        value = project_value if project_value is not None else getattr(global_chat, name)
        if value is not None:
            values[name] = value
    for layer in (project_chat, global_chat):
        if any(getattr(layer, name) is not None for name in COMMAND_ALLOWLIST_FIELDS):
            for name in COMMAND_ALLOWLIST_FIELDS:
                values[name] = list(getattr(layer, name) or [])
            break
    values["default_model"] = default_model
    _keep_project_from_loosening(values, global_chat, project_chat)
    return EffectiveChatPolicy.model_validate(values)


def _keep_project_from_loosening(
    values: dict[str, Any], global_chat: ChatConfig, project_chat: ChatConfig
) -> None:
    defaults = EffectiveChatPolicy()
    own_approval = global_chat.approval or defaults.approval
    if _looser(project_chat.approval, own_approval, APPROVAL_ORDER):
        _ignored("approval", project_chat.approval)
        values["approval"] = own_approval
    own_scope = global_chat.fs_scope or defaults.fs_scope
    if _looser(project_chat.fs_scope, own_scope, SCOPE_ORDER):
        _ignored("fs_scope", project_chat.fs_scope)
        values["fs_scope"] = own_scope
    if project_chat.allowed_paths is not None and own_scope == "sandboxed":
        _ignored("allowed_paths", "(a path list)")
        values["allowed_paths"] = list(global_chat.allowed_paths or [])
    if project_chat.disk_write_fallback and not global_chat.disk_write_fallback:
        _ignored("disk_write_fallback", True)
        values["disk_write_fallback"] = bool(global_chat.disk_write_fallback)
    # Protected paths add up: a project protecting more files is stricter, never looser.
    values["protected_paths"] = [
        *(global_chat.protected_paths or []),
        *(project_chat.protected_paths or []),
    ]
    own_cap, project_cap = global_chat.max_cost_microcents, project_chat.max_cost_microcents
    if own_cap is not None and project_cap is not None:
        values["max_cost_microcents"] = min(own_cap, project_cap)


def _looser(project_value: str | None, own_value: str, order: tuple[str, ...]) -> bool:
    return project_value is not None and order.index(project_value) > order.index(own_value)


def _ignored(field: str, value: object) -> None:
    _log.warning(
        "project.toml sets [chat].%s = %r, which is looser than your own configuration; "
        "ignored (set it in ~/.relavium/config.toml or your editor settings to allow it)",
        field,
        value,
    )


def merge_providers(
    global_providers: dict[str, ProviderConfig], project_providers: dict[str, ProviderConfig]
) -> dict[str, ProviderConfig]:
    """Providers by id; for an id in both files, each field the project sets wins."""
    merged: dict[str, ProviderConfig] = {}
    for provider_id in [
        *global_providers,
        *(p for p in project_providers if p not in global_providers),
    ]:
        fields: dict[str, Any] = {}
        for layer in (global_providers.get(provider_id), project_providers.get(provider_id)):
            if layer is not None:
                fields.update({name: getattr(layer, name) for name in layer.model_fields_set})
        if fields.get("kind") is None and provider_id in SELF_NAMED_KINDS:
            fields["kind"] = provider_id
        _apply_preset(provider_id, fields)
        merged[provider_id] = ProviderConfig.model_validate(fields)
    return merged


def _apply_preset(provider_id: str, fields: dict[str, Any]) -> None:
    """Fill what the entry leaves unset from its preset (named, or the provider's own id)."""
    name = fields.get("preset") or (provider_id if fields.get("kind") is None else None)
    preset = PROVIDER_PRESETS.get(name) if isinstance(name, str) else None
    if preset is None:
        return
    if fields.get("kind") is None:
        fields["kind"] = preset.kind
    if fields.get("api") is None and preset.api is not None:
        fields["api"] = preset.api
    if fields.get("base_url") is None and preset.base_url is not None:
        fields["base_url"] = preset.base_url
        # The preset's own address is this machine's server: no need to opt in to it.
        fields.setdefault("allow_local_endpoint", preset.local)


def resolve_default_model(
    global_file: GlobalConfigFile, project_file: ProjectConfigFile
) -> str | None:
    """Project ``chat.default_model`` → global ``chat.default_model`` → ``preferences``."""
    for candidate in (
        project_file.chat.default_model,
        global_file.chat.default_model,
        global_file.preferences.default_model,
    ):
        if candidate is not None:
            return candidate
    return None
