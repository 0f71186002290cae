from __future__ import annotations

import ipaddress
import json

import pytest

from relavium_lsp.contracts.agent import (
    DEFAULT_AGENT,
    OFFLINE_MODEL_ID,
    AgentDefinition,
    FallbackEntry,
)
from relavium_lsp.contracts.config import ProviderConfig
from relavium_lsp.errors import ProviderSetupError
from relavium_lsp.llm.anthropic.provider import AnthropicProvider
from relavium_lsp.llm.cassette import CassetteProvider
from relavium_lsp.llm.openai.provider import OpenAICompatibleProvider
from relavium_lsp.llm.providers import build_provider, check_endpoint, locate_model, resolve_chain
from relavium_lsp.llm.seam import StopChunk
from tests.unit.llm.llm_helpers import API_KEY, collect, request, text_of
from tests.unit.llm.wire_servers import openai_stream

PUBLIC = [ipaddress.ip_address("93.184.215.14")]


def public_dns(host: str, port: int):
    return PUBLIC


def keys(provider_id: str) -> str | None:
    return {"openai": API_KEY, "anthropic": "sk-ant-other"}.get(provider_id)


def build(provider_id, client, **config):
    return build_provider(
        provider_id,
        ProviderConfig.model_validate(config),
        client=client,
        key_lookup=keys,
        resolve=public_dns,
    )


async def test_defaults_for_the_two_vendors(client):
    openai = build("openai", client)
    anthropic = build("anthropic", client)
    assert isinstance(openai, OpenAICompatibleProvider) and openai.capabilities.needs_key
    assert openai.capabilities.key_env_var == "OPENAI_API_KEY"
    assert isinstance(anthropic, AnthropicProvider)
    assert anthropic.capabilities.key_env_var == "ANTHROPIC_API_KEY"
    custom = build("groq", client, kind="openai", base_url="https://api.groq.com/openai/v1")
    assert custom.capabilities.key_env_var == "GROQ_API_KEY"
    assert not custom.capabilities.needs_key


def test_kind_is_required_for_other_ids(client):
    with pytest.raises(ProviderSetupError, match="needs kind"):
        build("mystery", client)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1:11434/v1", "unencrypted"),
        ("https://127.0.0.1:8443/v1", "loopback"),
        ("https://[::1]:8443/v1", "loopback"),
        ("https://10.1.2.3/v1", "private"),
        ("https://192.168.0.8/v1", "private"),
        ("https://169.254.169.254/latest", "metadata"),
        ("https://[::ffff:127.0.0.1]/v1", "loopback"),
        ("https://0.0.0.0/v1", "unspecified"),
        ("http://api.example.com/v1", "unencrypted"),
    ],
)
def test_local_and_cleartext_endpoints_are_refused(client, url, reason):
    with pytest.raises(ProviderSetupError, match=reason) as caught:
        build("local", client, kind="openai", base_url=url)
    assert "allow_local_endpoint" in str(caught.value)
    allowed = build("local", client, kind="openai", base_url=url, allow_local_endpoint=True)
    assert isinstance(allowed, OpenAICompatibleProvider)


def test_hostnames_are_resolved_before_any_key_is_sent():
    # Real resolution: "localhost" is a loopback name on every machine.
    with pytest.raises(ProviderSetupError, match="loopback"):
        check_endpoint("x", "https://localhost:9999/v1", allow_local=False)

    def rebinding(host: str, port: int):
        return [ipaddress.ip_address("8.8.8.8"), ipaddress.ip_address("10.0.0.1")]

    with pytest.raises(ProviderSetupError, match="private"):
        check_endpoint("x", "https://sneaky.example/v1", allow_local=False, resolve=rebinding)


async def test_allowed_local_server_is_used_with_its_key(server, client):
    server.script(openai_stream(text=["local ", "answer"]))
    provider = build_provider(
        "local",
        ProviderConfig(
            kind="openai", base_url=f"{server.url}/v1", allow_local_endpoint=True, timeout_s=5
        ),
        client=client,
        key_lookup=lambda pid: "local-key" if pid == "local" else None,
    )
    chunks = await collect(provider.stream(request()))
    assert text_of(chunks) == "local answer"
    assert server.requests[0].headers["authorization"] == "Bearer local-key"


async def test_offline_is_always_available_and_cassette_kind_loads_files(client, tmp_path):
    offline = build("offline", client)
    assert isinstance(offline, CassetteProvider)
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            {
                "format": "relavium-cassette/1",
                "calls": [
                    {
                        "request": {"prompt": "hello", "tools_called": []},
                        "chunks": [
                            {"type": "text_delta", "text": "recorded"},
                            {"type": "stop", "stop_reason": "stop", "usage": {}},
                        ],
                    }
                ],
            }
        )
    )
    replay = build("recorded", client, kind="cassette", cassette=str(path), context_window=4096)
    assert replay.context_window("anything") == 4096
    chunks = await collect(replay.stream(request("hello")))
    assert text_of(chunks) == "recorded" and isinstance(chunks[-1], StopChunk)
    with pytest.raises(ProviderSetupError, match="needs cassette"):
        build("recorded", client, kind="cassette")


def test_model_references():
    configured = {"local": ProviderConfig(kind="openai")}
    assert locate_model(None, "local/llama3.1:8b", configured) == ("local", "llama3.1:8b")
    assert locate_model(None, "anthropic/claude-sonnet-4-5", configured) == (
        "anthropic",
        "claude-sonnet-4-5",
    )
    assert locate_model(None, "claude-3-5-haiku", configured) == ("anthropic", "claude-3-5-haiku")
    assert locate_model(None, "o3-mini", configured) == ("openai", "o3-mini")
    assert locate_model(None, OFFLINE_MODEL_ID, configured) == ("offline", OFFLINE_MODEL_ID)
    # The first segment is not a provider: the whole string is the model name.
    assert locate_model(None, "meta-llama/Llama-3-8B", configured) == (
        "local",
        "meta-llama/Llama-3-8B",
    )
    assert locate_model("local", "local/qwen", configured) == ("local", "qwen")
    with pytest.raises(ProviderSetupError, match="unknown provider"):
        locate_model("nowhere", "m", configured)
    with pytest.raises(ProviderSetupError, match="cannot tell"):
        locate_model(None, "mystery-model", {})


def test_resolve_chain_primary_then_fallbacks(client):
    agent = AgentDefinition(
        id="coder",
        name="Coder",
        model="claude-sonnet-4-5",
        fallback_chain=[
            FallbackEntry(model="openai/gpt-4o-mini", max_attempts=2),
            FallbackEntry(model="claude-3-5-haiku", provider="anthropic"),
        ],
    )
    chain = resolve_chain(agent, {}, None, client=client, key_lookup=keys, resolve=public_dns)
    assert [(e.provider.provider_id, e.model, e.max_attempts) for e in chain] == [
        ("anthropic", "claude-sonnet-4-5", 1),
        ("openai", "gpt-4o-mini", 2),
        ("anthropic", "claude-3-5-haiku", 1),
    ]
    assert chain[0].provider is chain[2].provider  # one provider object per id


def test_resolve_chain_defaults(client):
    offline = resolve_chain(DEFAULT_AGENT, {}, None, client=client, key_lookup=keys)
    assert [(e.provider.provider_id, e.model) for e in offline] == [("offline", OFFLINE_MODEL_ID)]
    configured = resolve_chain(
        DEFAULT_AGENT, {}, "openai/gpt-4.1", client=client, key_lookup=keys, resolve=public_dns
    )
    assert [(e.provider.provider_id, e.model) for e in configured] == [("openai", "gpt-4.1")]


def test_a_refused_endpoint_fails_the_whole_chain_loudly(client):
    providers = {"lan": ProviderConfig(kind="openai", base_url="https://10.0.0.5/v1")}
    agent = AgentDefinition(id="a", name="A", model="lan/qwen")
    with pytest.raises(ProviderSetupError, match="private"):
        resolve_chain(agent, providers, None, client=client, key_lookup=keys)


def test_vendor_default_endpoints_need_no_dns(client):
    def no_dns(host: str, port: int):
        raise AssertionError(f"unexpected DNS lookup of {host}")

    for provider_id in ("openai", "anthropic"):
        build_provider(
            provider_id, ProviderConfig(), client=client, key_lookup=keys, resolve=no_dns
        )
