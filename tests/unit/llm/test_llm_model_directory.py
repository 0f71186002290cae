"""The model directory behind relavium/listModels: listed, configured, cached, explained."""

from __future__ import annotations

import json

import httpx

from relavium_lsp.contracts.agent import AgentDefinition, FallbackEntry
from relavium_lsp.contracts.config import ProviderConfig
from relavium_lsp.llm.model_directory import ModelDirectory, ModelSources
from relavium_lsp.testing.loopback import LoopbackServer, ReceivedRequest, ScriptedResponse
from tests.unit.llm.llm_helpers import API_KEY

JSON = {"content-type": "application/json"}
# The shapes real servers answer GET /v1/models with.
OLLAMA_MODELS = {
    "object": "list",
    "data": [
        {"id": "qwen2.5-coder:7b", "object": "model", "created": 1, "owned_by": "library"},
        {"id": "llama3.2:latest", "object": "model", "created": 1, "owned_by": "library"},
    ],
}
LLAMACPP_MODELS = {
    "object": "list",
    "data": [
        {"id": "gemma-3-4b-it-Q4_K_M.gguf", "object": "model", "meta": {"n_ctx_train": 131072}}
    ],
}


def _serve(models: dict[str, object]) -> LoopbackServer:
    def respond(request: ReceivedRequest) -> ScriptedResponse:
        if request.method == "GET" and request.path.endswith("/models"):
            return ScriptedResponse(headers=JSON, body=json.dumps(models).encode())
        return ScriptedResponse(status=404, headers=JSON, body=b"{}")

    return LoopbackServer(responder=respond)


def _local(url: str) -> ProviderConfig:
    return ProviderConfig(kind="openai", base_url=url, allow_local_endpoint=True)


async def test_listed_and_configured_models_with_windows_and_prices() -> None:
    with _serve(OLLAMA_MODELS) as ollama, _serve(LLAMACPP_MODELS) as llamacpp:
        agent = AgentDefinition(
            id="coder",
            name="Coder",
            model="ollama/qwen2.5-coder:7b",
            fallback_chain=[FallbackEntry(model="claude-sonnet-4-5")],
        )
        sources = ModelSources(
            providers={
                "ollama": _local(f"{ollama.url}/v1"),
                "llamacpp": _local(f"{llamacpp.url}/v1"),
                # An Anthropic endpoint that cannot list models (this server 404s the URL).
                "anthropic": ProviderConfig(
                    kind="anthropic", base_url=f"{ollama.url}/x", allow_local_endpoint=True
                ),
            },
            agents=[agent],
            key_lookup=lambda provider_id: API_KEY if provider_id == "anthropic" else None,
        )
        async with httpx.AsyncClient() as client:
            report = await ModelDirectory(client).report(sources)
    entries = {(e.provider_id, e.model): e for e in report.models}
    coder = entries[("ollama", "qwen2.5-coder:7b")]
    assert (coder.listed, coder.configured) == (True, True)
    assert entries[("ollama", "llama3.2:latest")].configured is False
    gemma = entries[("llamacpp", "gemma-3-4b-it-Q4_K_M.gguf")]
    assert gemma.context_window == 131072  # from the server's own metadata
    claude = entries[("anthropic", "claude-sonnet-4-5")]
    assert (claude.listed, claude.configured) == (False, True)
    assert claude.context_window == 200_000 and claude.info is not None
    assert claude.info.cache_read_microcents_per_mtok == 30_000_000
    statuses = {s.provider_id: s for s in report.providers}
    assert statuses["ollama"].ok and statuses["ollama"].listed == 2
    assert not statuses["anthropic"].ok and "404" in (statuses["anthropic"].message or "")
    assert API_KEY not in repr(report)


async def test_a_provider_that_needs_a_key_is_not_asked_without_one() -> None:
    sources = ModelSources(
        providers={"openai": ProviderConfig(kind="openai")}, key_lookup=lambda provider_id: None
    )
    async with httpx.AsyncClient() as client:
        report = await ModelDirectory(client).report(sources)
    (status,) = report.providers
    assert not status.ok and "relavium-lsp keys set openai" in (status.message or "")


async def test_lists_are_cached_until_a_refresh() -> None:
    now = [0.0]
    with _serve(OLLAMA_MODELS) as ollama:
        sources = ModelSources(providers={"ollama": _local(f"{ollama.url}/v1")})
        async with httpx.AsyncClient() as client:
            directory = ModelDirectory(client, ttl_s=60, clock=lambda: now[0])
            await directory.report(sources)
            await directory.report(sources)
            assert len(ollama.requests) == 1
            await directory.report(sources, refresh=True)
            assert len(ollama.requests) == 2
            now[0] = 61.0
            await directory.report(sources)
            assert len(ollama.requests) == 3


async def test_an_unreachable_provider_is_explained_and_its_key_never_shown() -> None:
    with LoopbackServer() as closed:
        url = closed.url
    sources = ModelSources(
        providers={"gone": _local(f"{url}/v1")}, key_lookup=lambda provider_id: API_KEY
    )
    async with httpx.AsyncClient() as client:
        report = await ModelDirectory(client).report(sources)
    (status,) = report.providers
    assert not status.ok and "could not connect" in (status.message or "")
    assert API_KEY not in repr(report)
