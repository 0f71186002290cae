"""Which models a workspace can use: each provider's ``/models`` list plus the configured ones.

:class:`ModelDirectory` asks every provider the workspace configures or its agents use for
its model list (``GET /models``, cached for a few minutes per provider and endpoint), and
adds every model the configuration names (agents, fallback chains, the default model) even
when the provider cannot list it. Each entry carries the context window and prices where
known (the endpoint's own figure first, then the configured window, then the catalog).
A provider that cannot be reached is reported with the reason, never raised.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import httpx

from relavium_lsp.contracts.agent import OFFLINE_PROVIDER_ID, AgentDefinition
from relavium_lsp.contracts.config import ProviderConfig
from relavium_lsp.errors import RelaviumError
from relavium_lsp.llm.catalog import ModelInfo, model_info
from relavium_lsp.llm.keys import lookup_api_key
from relavium_lsp.llm.providers import KeyLookup, build_provider, locate_model
from relavium_lsp.llm.streaming_http import ModelsResult, StreamingHttpProvider

DEFAULT_TTL_S = 300.0


@dataclass(frozen=True)
class ModelEntryFacts:
    """One usable model and what is known about it."""

    provider_id: str
    model: str
    context_window: int | None
    info: ModelInfo | None
    listed: bool
    configured: bool


@dataclass(frozen=True)
class ProviderStatus:
    """Whether a provider's model list could be read, and if not, why."""

    provider_id: str
    ok: bool
    message: str | None = None
    listed: int = 0


@dataclass(frozen=True)
class ModelsReport:
    """Every model, ordered by provider then name, and each provider's status."""

    models: tuple[ModelEntryFacts, ...]
    providers: tuple[ProviderStatus, ...]


@dataclass(frozen=True)
class ModelSources:
    """What a workspace's configuration says about models: its providers and references."""

    providers: Mapping[str, ProviderConfig]
    agents: Iterable[AgentDefinition] = ()
    default_model: str | None = None
    key_lookup: KeyLookup = lookup_api_key
    # Providers whose endpoints a project file chose: no cloud credentials for them.
    withheld: frozenset[str] = frozenset()


def configured_references(sources: ModelSources) -> list[tuple[str, str]]:
    """``(provider id, model)`` for every model the configuration names and can place."""
    wanted: list[tuple[str | None, str]] = []
    if sources.default_model:
        wanted.append((None, sources.default_model))
    for agent in sources.agents:
        if agent.model:
            wanted.append((agent.provider, agent.model))
        wanted.extend((step.provider, step.model) for step in agent.fallback_chain)
    found: list[tuple[str, str]] = []
    for provider, model in wanted:
        try:
            reference = locate_model(provider, model, sources.providers)
        except RelaviumError:
            continue  # doctor reports models that cannot be placed
        if reference not in found:
            found.append(reference)
    return found


@dataclass
class ModelDirectory:
    """Model lists per provider, cached for ``ttl_s`` seconds (see the module docstring)."""

    client: httpx.AsyncClient
    ttl_s: float = DEFAULT_TTL_S
    clock: Callable[[], float] = time.monotonic
    _cache: dict[tuple[str, str, bool], tuple[float, ModelsResult]] = field(default_factory=dict)

    async def report(self, sources: ModelSources, *, refresh: bool = False) -> ModelsReport:
        """Every model the workspace can use, asking providers whose cached list is stale."""
        references = configured_references(sources)
        provider_ids = sorted({*sources.providers, *(pid for pid, _ in references)})
        statuses: list[ProviderStatus] = []
        listed: dict[str, ModelsResult] = {}
        lookups = [self._models_of(pid, sources, refresh=refresh) for pid in provider_ids]
        for provider_id, outcome in zip(provider_ids, await asyncio.gather(*lookups), strict=True):
            if isinstance(outcome, ModelsResult):
                listed[provider_id] = outcome
                ok = outcome.error is None
                message = None if ok else outcome.error.message  # type: ignore[union-attr]
                statuses.append(ProviderStatus(provider_id, ok, message, len(outcome.models)))
            else:
                statuses.append(ProviderStatus(provider_id, outcome is None, outcome))
        return ModelsReport(
            models=tuple(_entries(sources, listed, references)), providers=tuple(statuses)
        )

    async def _models_of(
        self, provider_id: str, sources: ModelSources, *, refresh: bool
    ) -> ModelsResult | str | None:
        """The provider's list; a message when it cannot be asked; ``None`` when it has none."""
        if provider_id == OFFLINE_PROVIDER_ID:
            return None
        settings = sources.providers.get(provider_id) or ProviderConfig()
        if settings.kind == "cassette":
            return None
        try:
            provider = await asyncio.to_thread(
                build_provider,
                provider_id,
                settings,
                client=self.client,
                key_lookup=sources.key_lookup,
                withheld=provider_id in sources.withheld,
            )
        except RelaviumError as error:
            return error.message
        if not isinstance(provider, StreamingHttpProvider):
            return None
        if provider.capabilities.needs_key and not provider.has_key:
            # Asking without a key only earns a 401; say what to do instead.
            variable = provider.capabilities.key_env_var
            return (
                f"{provider_id}: no API key, so its models were not listed (run "
                f"`relavium-lsp keys set {provider_id}` or set {variable})"
            )
        key = (provider_id, provider.base_url, provider.has_key)
        cached = self._cache.get(key)
        now = self.clock()
        if cached is not None and not refresh and now - cached[0] < self.ttl_s:
            return cached[1]
        result = await provider.list_models()
        if result.error is None:
            self._cache[key] = (now, result)
        return result


def _entries(
    sources: ModelSources,
    listed: dict[str, ModelsResult],
    references: list[tuple[str, str]],
) -> list[ModelEntryFacts]:
    entries: dict[tuple[str, str], ModelEntryFacts] = {}
    configured = set(references)
    for provider_id, result in listed.items():
        for remote in result.models:
            entries[(provider_id, remote.id)] = _facts(
                sources, provider_id, remote.id, remote.context_window, listed=True,
                configured=(provider_id, remote.id) in configured,
            )  # fmt: skip
    for provider_id, model in references:
        if (provider_id, model) not in entries:
            entries[(provider_id, model)] = _facts(
                sources, provider_id, model, None, listed=False, configured=True
            )
    return [entries[key] for key in sorted(entries)]


def _facts(
    sources: ModelSources,
    provider_id: str,
    model: str,
    window: int | None,
    *,
    listed: bool,
    configured: bool,
) -> ModelEntryFacts:
    info = model_info(model)
    settings = sources.providers.get(provider_id)
    context = window or (settings.context_window if settings else None)
    if context is None and info is not None:
        context = info.context_window
    return ModelEntryFacts(provider_id, model, context, info, listed, configured)
