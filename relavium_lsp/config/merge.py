"""Layering global and project configuration (``docs/design.md`` §8): project wins per field.

Two exceptions to per-field merging:

- ``allowed_commands`` and ``allowed_command_globs`` are a single allowlist. If a layer sets
  either, both come from that layer (the unset one as an empty list), so a project that
  narrows ``allowed_commands`` cannot silently inherit broad globs from the global file.
- **A project file can tighten trust, never loosen it** (:mod:`relavium_lsp.config.trust`):
  every ``[chat]`` field has a rule, and a project value looser than the user's own (their
  file's, else the default) is ignored with a warning — a more permissive ``approval`` or
  ``on_exceed``, a wider scope tier, a higher limit, commands or domains the user's own
  allowlist lacks, extra ``allowed_paths`` unless the user allows the project tier,
  disk-write fallback.
"""

from __future__ import annotations

from typing import Any

from relavium_lsp.config.trust import tighten, tighten_paths
from relavium_lsp.contracts.config import (
    ChatConfig,
    EffectiveChatPolicy,
    GlobalConfigFile,
    ProjectConfigFile,
    ProviderConfig,
)
from relavium_lsp.contracts.presets import PROVIDER_PRESETS

COMMAND_ALLOWLIST_FIELDS = ("allowed_commands", "allowed_command_globs")
# Merged by their own rule below, not field by field.
_SPECIAL_FIELDS = (*COMMAND_ALLOWLIST_FIELDS, "allowed_paths", "default_model")
# Provider ids whose ``kind`` defaults to the id itself.
SELF_NAMED_KINDS = ("openai", "anthropic")


def merge_policy(
    global_chat: ChatConfig, project_chat: ChatConfig, *, default_model: str | None
) -> EffectiveChatPolicy:
    """The effective ``[chat]`` policy: project (no looser than the user's), global, defaults."""
    defaults = EffectiveChatPolicy()
    values: dict[str, Any] = {}
    own: dict[str, Any] = {}
    for name in ChatConfig.model_fields:
        mine = getattr(global_chat, name)
        own[name] = mine if mine is not None else getattr(defaults, name, None)
        if name not in _SPECIAL_FIELDS:
            values[name] = tighten("chat", name, own[name], getattr(project_chat, name))
    if any(getattr(project_chat, name) is not None for name in COMMAND_ALLOWLIST_FIELDS):
        for name in COMMAND_ALLOWLIST_FIELDS:
            project_list = list(getattr(project_chat, name) or [])
            values[name] = tighten("chat", name, own[name], project_list)
    else:
        values.update({name: list(own[name]) for name in COMMAND_ALLOWLIST_FIELDS})
    values["allowed_paths"] = tighten_paths(
        own["fs_scope"], own["allowed_paths"], project_chat.allowed_paths
    )
    values["default_model"] = default_model
    return EffectiveChatPolicy.model_validate(
        {name: value for name, value in values.items() if value is not None}
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
