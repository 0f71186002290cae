"""Setting up a real model from the editor (``docs/design.md`` §8.1).

:func:`provider_presets` is what a setup picker offers: the hosted ``openai`` and
``anthropic`` providers, then every entry of the preset table, whatever it holds.
:func:`setup_model` does what a user would otherwise do in a terminal and an editor: store the
key in the OS keychain (``relavium-lsp keys set``), write ``default_model`` and the provider's
block into ``~/.relavium/config.toml`` keeping the file's comments, and ask the provider for
its models (``relavium-lsp doctor``'s check) — then says what happened. It needs no open
history database, so it works even when the engine could not open.

The key is registered as a secret before anything else happens, so every log record redacts
it; it goes to the keychain and nowhere else (not the config file, a result, an event or an
error). A model name or base URL that contains a key is refused without quoting it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from relavium_lsp.config import load_workspace_config
from relavium_lsp.config.user_config_edit import ProviderFields, write_model_choice
from relavium_lsp.contracts.model_setup import (
    SUGGESTED_MODELS,
    KeyStorage,
    ProviderPresetInfo,
    SetupCheck,
    SetupModelParams,
    SetupModelResult,
)
from relavium_lsp.contracts.presets import PROVIDER_PRESETS
from relavium_lsp.engine.api_reading import key_lookup_for
from relavium_lsp.errors import InvalidInput, RelaviumError
from relavium_lsp.llm.anthropic import DEFAULT_ANTHROPIC_BASE_URL
from relavium_lsp.llm.keys import KeychainUnavailable, key_env_var, store_api_key
from relavium_lsp.llm.model_directory import ModelSources
from relavium_lsp.llm.openai_compat import DEFAULT_OPENAI_BASE_URL
from relavium_lsp.llm.provider_probe import probe_provider
from relavium_lsp.log_secrets import redact, register_secret
from relavium_lsp.paths import global_config_path
from relavium_lsp.secret_shapes import secret_reason

# The built-in providers (no preset: their kind is their id), offered first.
HOSTED_PROVIDERS = (
    ProviderPresetInfo(
        id="openai", label="OpenAI", kind="openai", needs_key=True, local=False,
        base_url=DEFAULT_OPENAI_BASE_URL,
    ),
    ProviderPresetInfo(
        id="anthropic", label="Anthropic", kind="anthropic", needs_key=True, local=False,
        base_url=DEFAULT_ANTHROPIC_BASE_URL,
    ),
)  # fmt: skip


def provider_presets() -> list[ProviderPresetInfo]:
    """Every provider a setup can choose: hosted ones first, then the preset table's."""
    presets = [
        ProviderPresetInfo(
            id=preset_id,
            label=preset.label,
            kind=preset.kind,
            needs_key=preset.needs_key,
            local=preset.local,
            base_url=preset.base_url or None,
        )
        for preset_id, preset in PROVIDER_PRESETS.items()
        if preset_id not in {hosted.id for hosted in HOSTED_PROVIDERS}
    ]
    return [
        info.model_copy(update={"suggested_models": list(SUGGESTED_MODELS.get(info.id, ()))})
        for info in (*HOSTED_PROVIDERS, *presets)
    ]


async def setup_model(
    params: SetupModelParams, *, workspace: Path | None, home: Path
) -> SetupModelResult:
    """Store the key, write the user config, check the provider; say what was done."""
    if params.api_key is not None:
        register_secret(params.api_key)  # first: nothing below may log it
    preset = _preset(params.preset)
    _refuse_keys_in_plain_fields(params)
    key_stored: KeyStorage = "none"
    key_problem: SetupCheck | None = None
    if params.api_key is not None:
        try:
            key_stored = await asyncio.to_thread(store_api_key, preset.id, params.api_key)
        except KeychainUnavailable as error:
            key_problem = SetupCheck(ok=False, message=f"The key was not stored: {error.message}")
    default_model = f"{preset.id}/{params.model}"
    config_path = global_config_path(home)
    await asyncio.to_thread(
        write_model_choice,
        config_path,
        default_model=default_model,
        provider_id=preset.id,
        provider_fields=_provider_fields(preset, params.base_url),
    )
    check = key_problem or await _check(preset, params.model, default_model, workspace, home)
    return SetupModelResult(
        default_model=default_model,
        config_path=str(config_path),
        key_stored=key_stored,
        check=check.model_copy(update={"message": redact(check.message)}),
    )


def _preset(preset_id: str) -> ProviderPresetInfo:
    for info in provider_presets():
        if info.id == preset_id:
            return info
    known = ", ".join(info.id for info in provider_presets())
    raise InvalidInput(f"unknown provider preset {preset_id!r}; known: {known}")


def _refuse_keys_in_plain_fields(params: SetupModelParams) -> None:
    """A key pasted into the model or URL field would be written to the config file."""
    for name, value in (("model", params.model), ("baseUrl", params.base_url)):
        if value is None:
            continue
        reason = secret_reason(value)
        if reason is None and params.api_key is not None and params.api_key in value:
            reason = "it contains the API key"
        if reason is not None:
            raise InvalidInput(f"{name} was refused: {reason}; put the key in the API key field")
    if params.base_url is not None and httpx.URL(params.base_url).userinfo:
        raise InvalidInput("baseUrl was refused: credentials in a URL would be written in plain")


def _provider_fields(preset: ProviderPresetInfo, base_url: str | None) -> ProviderFields | None:
    """The ``[providers.<id>]`` fields to write, or ``None`` when no block is needed.

    The built-in providers need none unless they are pointed elsewhere; a preset's id names
    its preset, so an empty table is enough. A local server's preset pointed at another
    address is still a server the user runs: its address is allowed (``allow_local_endpoint``).
    """
    hosted = any(preset.id == info.id for info in HOSTED_PROVIDERS)
    if base_url is None or base_url.rstrip("/") == (preset.base_url or "").rstrip("/"):
        return None if hosted else {}
    fields: dict[str, str | bool] = {"base_url": base_url}
    if preset.local:
        fields["allow_local_endpoint"] = True
    return fields


async def _check(
    preset: ProviderPresetInfo,
    model: str,
    default_model: str,
    workspace: Path | None,
    home: Path,
) -> SetupCheck:
    """The doctor's check of the provider, plus whether this workspace overrides the choice."""
    try:
        config = await asyncio.to_thread(load_workspace_config, workspace, home)
    except RelaviumError as error:
        return SetupCheck(ok=False, message=f"The configuration does not load: {error.message}")
    sources = ModelSources(
        providers=config.providers,
        agents=tuple(config.agents.values()),
        default_model=config.default_model,
        key_lookup=key_lookup_for(config),
        withheld=config.keyless_providers,
    )
    async with httpx.AsyncClient(follow_redirects=False) as client:
        finding = await probe_provider(preset.id, sources, client, [model])
    if finding is None and preset.needs_key and sources.key_lookup(preset.id) is None:
        check = SetupCheck(
            ok=False,
            message=f"No API key for {preset.label}: enter one in the setup, or set "
            f"{key_env_var(preset.id)} in the environment the editor starts from.",
        )
    elif finding is None:
        check = SetupCheck(ok=True, message=f"{preset.label} is set up (nothing to ask it).")
    else:
        hint = f" ({finding.hint})" if finding.hint else ""
        check = SetupCheck(ok=finding.ok, message=f"{preset.label}: {finding.summary}{hint}")
    if config.default_model is not None and config.default_model != default_model:
        check = SetupCheck(
            ok=False,
            message=f"{check.message} Note: this workspace's configuration chooses "
            f"{config.default_model} instead, so its sessions keep using that.",
        )
    return check
