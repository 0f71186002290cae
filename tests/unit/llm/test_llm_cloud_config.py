"""Configuration of the cloud providers: presets, credentials withheld, choice, fallback."""

from __future__ import annotations

import ipaddress
import subprocess
import sys
from pathlib import Path

import pytest

from relavium_lsp.config.workspace import load_workspace_config
from relavium_lsp.contracts.agent import AgentDefinition, FallbackEntry
from relavium_lsp.contracts.config import ProviderConfig
from relavium_lsp.contracts.presets import PROVIDER_PRESETS
from relavium_lsp.errors import ProviderSetupError
from relavium_lsp.llm.azure.provider import AzureOpenAIProvider
from relavium_lsp.llm.bedrock.credentials import AwsCredentials
from relavium_lsp.llm.bedrock.provider import BedrockProvider
from relavium_lsp.llm.cloud_providers import WithheldCredentials
from relavium_lsp.llm.fallback import AttemptFailed, AttemptStarted, stream_with_fallback
from relavium_lsp.llm.gemini.provider import GeminiProvider
from relavium_lsp.llm.providers import build_provider, locate_model, resolve_chain
from relavium_lsp.llm.responses.provider import OpenAIResponsesProvider
from relavium_lsp.llm.seam import ErrorChunk, StopChunk
from relavium_lsp.llm.vertex.provider import VertexProvider
from relavium_lsp.testing.cloud_scripts import bedrock_error, gemini_stream
from tests.unit.llm.llm_helpers import collect, request, text_of

PUBLIC = [ipaddress.ip_address("93.184.215.14")]


def _dns(host: str, port: int):
    return PUBLIC


def _keys(provider_id: str) -> str | None:
    return {"gemini": "AIza-gemini", "azure": "azure-key"}.get(provider_id)


def _workspace(tmp_path: Path, global_toml: str, project_toml: str = ""):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(global_toml, encoding="utf-8")
    workspace = tmp_path / "ws"
    (workspace / ".relavium").mkdir(parents=True, exist_ok=True)
    (workspace / ".relavium" / "project.toml").write_text(project_toml, encoding="utf-8")
    return load_workspace_config(workspace, home)


def test_every_cloud_provider_is_one_line_of_configuration(tmp_path, client):
    config = _workspace(
        tmp_path,
        '[providers.gemini]\n[providers.bedrock]\nregion = "eu-west-1"\n[providers.vertex]\n'
        'project = "p"\n[providers.azure]\nbase_url = "https://contoso.openai.azure.com"\n'
        '[providers.codex]\npreset = "openai-responses"\n',
    )
    built = {
        pid: build_provider(pid, settings, client=client, key_lookup=_keys, resolve=_dns)
        for pid, settings in config.providers.items()
    }
    assert isinstance(built["gemini"], GeminiProvider)
    assert built["gemini"].base_url == "https://generativelanguage.googleapis.com/v1beta"
    assert isinstance(built["bedrock"], BedrockProvider) and built["bedrock"].region == "eu-west-1"
    assert built["bedrock"].base_url == "https://bedrock-runtime.eu-west-1.amazonaws.com"
    assert isinstance(built["bedrock"].credentials, AwsCredentials)
    assert isinstance(built["vertex"], VertexProvider) and built["vertex"].project == "p"
    assert built["vertex"].base_url == "https://us-central1-aiplatform.googleapis.com"
    assert isinstance(built["azure"], AzureOpenAIProvider) and built["azure"].api == "chat"
    assert isinstance(built["codex"], OpenAIResponsesProvider)
    for name in ("azure", "gemini", "vertex", "bedrock", "openai-responses"):
        assert name in PROVIDER_PRESETS  # listed in the preset table the setup UI shows


def test_azure_needs_its_endpoint_and_apis_are_checked(client):
    with pytest.raises(ProviderSetupError, match="base_url"):
        build_provider("azure", ProviderConfig(kind="azure"), client=client, key_lookup=_keys)
    with pytest.raises(ProviderSetupError, match="converse"):
        build_provider("b", ProviderConfig(kind="bedrock", api="responses"), client=client)


async def test_a_project_file_choosing_the_endpoint_gets_no_credentials(tmp_path, client, server):
    config = _workspace(
        tmp_path,
        "[providers.gemini]\n",
        f'[providers.gemini]\nbase_url = "{server.url}/v1beta"\nallow_local_endpoint = true\n',
    )
    assert "gemini" in config.keyless_providers
    agent = AgentDefinition(id="a", name="A", model="gemini-2.5-pro", provider="gemini")
    (entry,) = resolve_chain(
        agent,
        config.providers,
        None,
        client=client,
        key_lookup=_keys,
        withheld=config.keyless_providers,
    )
    assert isinstance(entry.provider, GeminiProvider)
    assert isinstance(entry.provider.credentials, WithheldCredentials)
    chunks = await collect(entry.provider.stream(request(model="gemini-2.5-pro")))
    assert isinstance(chunks[-1], ErrorChunk) and chunks[-1].error.kind == "auth"
    assert "project" in chunks[-1].error.message
    assert server.requests == []  # nothing was sent there, not even without a key


@pytest.mark.parametrize(
    "field", ['credentials_file = "/tmp/sa.json"', 'profile = "admin"', 'auth = "entra-id"']
)
def test_a_project_file_choosing_whose_credentials_are_used_withholds_them_too(tmp_path, field):
    config = _workspace(
        tmp_path, '[providers.vertex]\nproject = "p"\n', f"[providers.vertex]\n{field}\n"
    )
    assert "vertex" in config.keyless_providers


def test_gemini_models_find_the_one_provider_that_serves_them():
    providers = {"work": ProviderConfig(kind="vertex"), "local": ProviderConfig(kind="openai")}
    assert locate_model(None, "gemini-2.5-pro", providers) == ("work", "gemini-2.5-pro")


async def test_the_fallback_chain_crosses_providers(client, server):
    from tests.unit.llm.wire_servers import LoopbackServer

    with LoopbackServer() as gemini_server:
        server.script(bedrock_error(429, "ThrottlingException", "Rate exceeded"))
        gemini_server.script(gemini_stream(text=["Gemini answered."]))
        providers = {
            "bedrock": ProviderConfig(
                kind="bedrock", base_url=server.url, allow_local_endpoint=True
            ),
            "gemini": ProviderConfig(
                kind="gemini", base_url=f"{gemini_server.url}/v1beta", allow_local_endpoint=True
            ),
        }
        keys = {"bedrock": "ABSK-bedrock-key", "gemini": "AIza-key"}
        agent = AgentDefinition(
            id="a",
            name="A",
            model="amazon.nova-pro-v1:0",
            provider="bedrock",
            fallback_chain=[FallbackEntry(model="gemini-2.5-flash", provider="gemini")],
        )
        chain = resolve_chain(agent, providers, None, client=client, key_lookup=keys.get)
        items = [
            item
            async for item in stream_with_fallback(chain, request(model="amazon.nova-pro-v1:0"))
        ]
    assert [i.model for i in items if isinstance(i, AttemptStarted)] == [
        "amazon.nova-pro-v1:0",
        "gemini-2.5-flash",
    ]
    failed = [i for i in items if isinstance(i, AttemptFailed)]
    assert len(failed) == 1 and failed[0].error.kind == "rate_limit"
    assert text_of(items) == "Gemini answered."
    assert isinstance(items[-1], StopChunk)
    assert server.requests[0].headers["authorization"] == "Bearer ABSK-bedrock-key"


def test_building_providers_loads_no_cloud_adapter_until_one_is_configured():
    heavy = (
        "botocore",
        "google.auth",
        "relavium_lsp.llm.bedrock",
        "relavium_lsp.llm.vertex",
        "relavium_lsp.llm.gemini",
        "relavium_lsp.llm.azure",
        "relavium_lsp.llm.responses",
    )
    script = (
        "import sys, httpx\n"
        "from relavium_lsp.contracts.config import ProviderConfig\n"
        "from relavium_lsp.llm.providers import build_provider\n"
        "client = httpx.AsyncClient()\n"
        "build_provider('openai', ProviderConfig(), client=client, key_lookup=lambda p: None)\n"
        f"print(sorted(m for m in sys.modules if m.startswith({heavy!r})))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]", loaded.stdout
