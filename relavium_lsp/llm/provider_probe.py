"""Asking one provider for its models and explaining what is wrong: the provider check.

One ``GET /models`` (the cheapest authenticated call every compatible server answers) tells
apart the things that go wrong: nothing listening, a wrong base URL, a refused key, a server
that is not an OpenAI- or Anthropic-compatible API, and a model the server does not have.
``relavium-lsp doctor`` runs it for every configured provider; ``relavium/setupModel`` for the
provider it just set up. Keys are never part of a finding.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from relavium_lsp.contracts.config import ProviderConfig
from relavium_lsp.contracts.presets import PROVIDER_PRESETS
from relavium_lsp.errors import RelaviumError
from relavium_lsp.llm.authorized_http import AuthorizedHttpProvider
from relavium_lsp.llm.cloud_probe import endpoint_finding
from relavium_lsp.llm.model_directory import ModelSources
from relavium_lsp.llm.providers import build_provider
from relavium_lsp.llm.streaming_http import ModelsResult, StreamingHttpProvider

PROBE_TIMEOUT_S = 5.0
_SHOWN_MODELS = 5
_START_HINTS = {
    "ollama": "start it with `ollama serve`",
    "llamacpp": "start it with `llama-server -m MODEL.gguf`",
    "vllm": "start it with `vllm serve MODEL`",
    "lmstudio": "start the server in LM Studio (Developer tab) or with `lms server start`",
    "localai": "start LocalAI",
}


@dataclass(frozen=True)
class Finding:
    """One probe outcome (doctor turns it into a check line)."""

    provider_id: str
    ok: bool
    summary: str
    hint: str | None = None


async def probe_provider(
    provider_id: str, sources: ModelSources, client: httpx.AsyncClient, models: list[str]
) -> Finding | None:
    """Ask ``provider_id`` for its models; ``None`` when there is nothing to ask.

    Nothing is asked of a cassette, a provider that is not an HTTP server, or one that needs
    a key and has none (the key check says so; asking would only earn a 401). ``models`` are
    the models it should serve.
    """
    settings = sources.providers.get(provider_id) or ProviderConfig()
    if settings.kind == "cassette":
        return None
    try:
        provider = build_provider(
            provider_id,
            settings.model_copy(update={"timeout_s": min(settings.timeout_s, PROBE_TIMEOUT_S)}),
            client=client,
            key_lookup=sources.key_lookup,
            withheld=provider_id in sources.withheld,
        )
    except RelaviumError as error:
        return Finding(provider_id, False, error.message)
    if isinstance(provider, AuthorizedHttpProvider):  # the cloud platforms (llm/cloud_probe.py)
        found = await endpoint_finding(provider, settings, models)
        return Finding(provider_id, found.ok, found.summary, found.hint)
    if not isinstance(provider, StreamingHttpProvider):
        return None
    if provider.capabilities.needs_key and not provider.has_key:
        return None  # the key check reports this; asking would only earn a 401
    result = await provider.list_models()
    return _explain(provider_id, settings, result, models)


def _explain(
    provider_id: str, settings: ProviderConfig, result: ModelsResult, models: list[str]
) -> Finding:
    url = httpx.URL(result.url)
    where = f"{url.host}:{url.port}" if url.port else str(url.host)
    error = result.error
    if error is None:
        return _listed(provider_id, result, models)
    preset = settings.preset or (provider_id if provider_id in PROVIDER_PRESETS else None)
    if error.kind == "transport" and "could not connect" in error.message:
        start = _START_HINTS.get(preset or "", "check that the server is running")
        return Finding(
            provider_id,
            False,
            f"nothing answers at {where} ({result.url})",
            f"{start}, or fix base_url under [providers.{provider_id}]",
        )
    if error.kind == "timeout":
        return Finding(provider_id, False, f"no answer from {where} within {PROBE_TIMEOUT_S:g}s")
    if error.kind == "auth":
        return Finding(
            provider_id,
            False,
            f"{where} refused the request (HTTP {error.status}): the API key is missing or wrong",
            f"run `relavium-lsp keys set {provider_id}` with a valid key",
        )
    if error.status == 404:
        return Finding(
            provider_id,
            False,
            f"{result.url} does not exist (HTTP 404): base_url points at the wrong path",
            "OpenAI-compatible servers usually want base_url ending in /v1",
        )
    return Finding(provider_id, False, error.message, "check base_url and the server's logs")


def _listed(provider_id: str, result: ModelsResult, models: list[str]) -> Finding:
    served = {model.id for model in result.models}
    summary = f"{result.url} answers with {len(served)} model(s)"
    missing = [model for model in models if served and model not in served]
    if not missing:
        shown = ", ".join(sorted(models)) if models else ""
        return Finding(provider_id, True, summary + (f"; serves {shown}" if shown else ""))
    examples = ", ".join(sorted(served)[:_SHOWN_MODELS])
    return Finding(
        provider_id,
        False,
        f"{summary}, but not {', '.join(repr(m) for m in missing)} (it has: {examples}"
        f"{', …' if len(served) > _SHOWN_MODELS else ''})",
        "fix the agent's model, or make the server provide it (e.g. `ollama pull MODEL`)",
    )
