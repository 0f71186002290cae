"""``doctor``'s provider probes: ask each configured provider for its models, explain failures.

The probe and its explanations are :mod:`relavium_lsp.llm.provider_probe` (the editor's
model setup runs the same one); this module runs it for every provider the workspace
configures or uses. Keys are never printed.
"""

from __future__ import annotations

import asyncio

import httpx

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import OFFLINE_PROVIDER_ID
from relavium_lsp.engine.api import key_lookup_for
from relavium_lsp.llm.model_directory import ModelSources, configured_references
from relavium_lsp.llm.provider_probe import Finding, probe_provider


def probe_providers(config: WorkspaceConfig) -> list[Finding]:
    """Probe every HTTP provider the workspace configures or uses (blocking; runs a loop)."""
    return asyncio.run(_probe_all(config))


async def _probe_all(config: WorkspaceConfig) -> list[Finding]:
    sources = ModelSources(
        providers=config.providers,
        agents=tuple(config.agents.values()),
        default_model=config.default_model,
        key_lookup=key_lookup_for(config),
        withheld=config.keyless_providers,
    )
    wanted: dict[str, list[str]] = {}
    for provider_id, model in configured_references(sources):
        wanted.setdefault(provider_id, []).append(model)
    provider_ids = sorted({*config.providers, *wanted} - {OFFLINE_PROVIDER_ID})
    async with httpx.AsyncClient(follow_redirects=False) as client:
        found = await asyncio.gather(
            *(probe_provider(pid, sources, client, wanted.get(pid, [])) for pid in provider_ids)
        )
    return [finding for finding in found if finding is not None]
