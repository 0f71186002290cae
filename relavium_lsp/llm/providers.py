"""Configuration → provider objects, and an agent → its fallback chain.

``[providers.<id>]`` entries choose an adapter by ``kind`` (``openai`` and ``anthropic``
default to their own id; ``azure``, ``gemini``, ``vertex`` and ``bedrock`` are built by
:mod:`relavium_lsp.llm.cloud_providers`, which loads them only then). Base URLs are
checked before any key could be sent: a host that is (or resolves to) a loopback, private,
link-local or otherwise non-public address is refused unless the entry sets
``allow_local_endpoint = true``, and so is plain ``http://`` (a key would travel
unencrypted). The id ``offline`` always exists and replays the bundled demo cassette.

Model references are ``model`` or ``provider/model`` — the second form only when the first
segment is a configured (or built-in) provider id, so ``meta-llama/Llama-3-8B`` stays one
model name. Without a provider, ``claude-*`` means Anthropic, ``gpt-*``/``o1``/``o3``/``o4``
mean OpenAI, ``gemini-*`` the one configured Gemini or Vertex provider, and a workspace with
exactly one configured provider uses that one.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

import httpx

from relavium_lsp.contracts.agent import OFFLINE_MODEL_ID, OFFLINE_PROVIDER_ID, AgentDefinition
from relavium_lsp.contracts.config import ProviderConfig
from relavium_lsp.errors import ProviderSetupError
from relavium_lsp.llm.anthropic import DEFAULT_ANTHROPIC_BASE_URL, AnthropicProvider
from relavium_lsp.llm.cassette import CassetteProvider
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.llm.keys import lookup_api_key
from relavium_lsp.llm.offline import offline_provider
from relavium_lsp.llm.openai_compat import DEFAULT_OPENAI_BASE_URL, OpenAICompatibleProvider
from relavium_lsp.llm.seam import Provider
from relavium_lsp.llm.streaming_http import StreamingHttpProvider
from relavium_lsp.netaddr import IPAddress, blocked_reason

BUILTIN_PROVIDER_IDS = ("openai", "anthropic", OFFLINE_PROVIDER_ID)
CLOUD_KINDS = ("azure", "gemini", "vertex", "bedrock")
_GEMINI_KINDS = ("gemini", "vertex")
KeyLookup = Callable[[str], str | None]
HostResolver = Callable[[str, int], Sequence[IPAddress]]
_OPENAI_PREFIXES = ("gpt-", "chatgpt-", "o1", "o3", "o4")


def resolve_host(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (empty when it does not resolve). Blocking."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    addresses: list[IPAddress] = []
    for info in infos:
        raw = str(info[4][0]).split("%", 1)[0]  # drop an IPv6 zone id
        try:
            addresses.append(ipaddress.ip_address(raw))
        except ValueError:
            continue
    return addresses


def check_endpoint(
    provider_id: str, base_url: str, *, allow_local: bool, resolve: HostResolver = resolve_host
) -> None:
    """Refuse a base URL that reaches a non-public address or uses plain HTTP."""
    if allow_local:
        return
    url = httpx.URL(base_url)
    host = url.host
    advice = (
        f"set allow_local_endpoint = true under [providers.{provider_id}] if this is "
        "a local model server you trust"
    )
    if url.scheme != "https":
        raise ProviderSetupError(
            f"provider {provider_id!r}: base_url uses {url.scheme}://, so the API key would "
            f"travel unencrypted; use https, or {advice}"
        )
    try:
        addresses: Sequence[IPAddress] = [ipaddress.ip_address(host)]
    except ValueError:
        addresses = resolve(host, url.port or 443)
    for address in addresses:
        reason = blocked_reason(address)
        if reason is not None:
            raise ProviderSetupError(
                f"provider {provider_id!r}: base_url host {host!r} is {reason}; {advice}"
            )


def _kind(provider_id: str, config: ProviderConfig) -> str:
    if config.kind is not None:
        return config.kind
    if provider_id in ("openai", "anthropic"):
        return provider_id
    raise ProviderSetupError(
        f'provider {provider_id!r} needs kind = "openai", "anthropic", "azure", "gemini", '
        '"vertex", "bedrock" or "cassette"'
    )


def build_provider(
    provider_id: str,
    config: ProviderConfig,
    *,
    client: httpx.AsyncClient,
    key_lookup: KeyLookup = lookup_api_key,
    resolve: HostResolver = resolve_host,
    withheld: bool = False,
) -> Provider:
    """The provider for one ``[providers.<id>]`` entry.

    A custom ``base_url`` with a host name is resolved (blocking DNS) to check where it
    points; callers on an event loop with such entries should build off the loop.
    ``withheld``: a project file chose this provider's endpoint, so cloud credentials are
    not sent to it (``key_lookup`` already withholds API keys).
    """
    if provider_id == OFFLINE_PROVIDER_ID:
        return offline_provider()
    kind = _kind(provider_id, config)
    if kind == "cassette":
        if not config.cassette:
            raise ProviderSetupError(f"provider {provider_id!r} (cassette) needs cassette = PATH")
        return CassetteProvider(
            provider_id, Path(config.cassette).expanduser(), context_window=config.context_window
        )
    if kind in CLOUD_KINDS:
        from relavium_lsp.llm.cloud_providers import build_cloud_provider

        def check(base_url: str) -> None:
            check_endpoint(
                provider_id, base_url, allow_local=config.allow_local_endpoint, resolve=resolve
            )

        return build_cloud_provider(
            provider_id,
            kind,
            config,
            client=client,
            key_lookup=key_lookup,
            withheld=withheld,
            check=check,
        )
    default = DEFAULT_OPENAI_BASE_URL if kind == "openai" else DEFAULT_ANTHROPIC_BASE_URL
    base_url = str(config.base_url).rstrip("/") if config.base_url is not None else default
    if base_url != default:
        # The vendors' own endpoints need no check (and no DNS lookup while building).
        check_endpoint(
            provider_id, base_url, allow_local=config.allow_local_endpoint, resolve=resolve
        )
    adapter: type[StreamingHttpProvider] = (
        OpenAICompatibleProvider if kind == "openai" else AnthropicProvider
    )
    if kind == "openai" and config.api == "responses":
        from relavium_lsp.llm.responses.provider import OpenAIResponsesProvider

        adapter = OpenAIResponsesProvider
    elif config.api not in (None, "chat") and kind == "openai":
        raise ProviderSetupError(f'provider {provider_id!r}: api must be "chat" or "responses"')
    provider = adapter(
        provider_id,
        base_url=base_url,
        api_key=key_lookup(provider_id),
        client=client,
        timeout_s=config.timeout_s,
        context_window=config.context_window,
    )
    if isinstance(provider, AnthropicProvider):
        provider.prompt_caching = config.prompt_caching
    return provider


def _infer_provider(model: str, providers: Mapping[str, ProviderConfig]) -> str:
    lowered = model.lower()
    if model == OFFLINE_MODEL_ID:
        return OFFLINE_PROVIDER_ID
    if lowered.startswith("claude"):
        return "anthropic"
    if lowered.startswith(_OPENAI_PREFIXES):
        return "openai"
    if lowered.startswith("gemini"):
        serving = [pid for pid, config in providers.items() if config.kind in _GEMINI_KINDS]
        if len(serving) == 1:
            return serving[0]
    configured = [pid for pid in providers if pid != OFFLINE_PROVIDER_ID]
    if len(configured) == 1:
        return configured[0]
    raise ProviderSetupError(
        f"cannot tell which provider serves model {model!r}; write it as provider/model "
        "or set the agent's provider"
    )


def locate_model(
    provider: str | None, model: str, providers: Mapping[str, ProviderConfig]
) -> tuple[str, str]:
    """``(provider id, model name)`` for a model reference."""
    known = set(providers) | set(BUILTIN_PROVIDER_IDS)
    if provider is None and "/" in model:
        head, rest = model.split("/", 1)
        if head in known and rest:
            return head, rest
    if provider is not None:
        if provider not in known:
            raise ProviderSetupError(f"unknown provider {provider!r} for model {model!r}")
        prefix = f"{provider}/"
        return provider, model[len(prefix) :] if model.startswith(prefix) else model
    return _infer_provider(model, providers), model


def primary_reference(agent: AgentDefinition, default_model: str | None) -> tuple[str | None, str]:
    """``(provider, model)`` of the agent's first model: its own, the default, else offline."""
    if agent.model:
        return agent.provider, agent.model
    if default_model:
        return agent.provider, default_model
    return OFFLINE_PROVIDER_ID, OFFLINE_MODEL_ID


def resolve_chain(
    agent: AgentDefinition,
    providers: Mapping[str, ProviderConfig],
    default_model: str | None,
    *,
    client: httpx.AsyncClient,
    key_lookup: KeyLookup = lookup_api_key,
    resolve: HostResolver = resolve_host,
    withheld: Collection[str] = (),
) -> list[ChainEntry]:
    """The agent's primary model, then its ``fallback_chain``, as ready providers.

    ``withheld``: providers whose endpoints a project file chose (no credentials for them).
    """
    primary = primary_reference(agent, default_model)
    references = [(primary[0], primary[1], 1)] + [
        (step.provider, step.model, step.max_attempts) for step in agent.fallback_chain
    ]
    built: dict[str, Provider] = {}
    entries: list[ChainEntry] = []
    for provider, model, attempts in references:
        provider_id, model_name = locate_model(provider, model, providers)
        if provider_id not in built:
            built[provider_id] = build_provider(
                provider_id,
                providers.get(provider_id) or ProviderConfig(),
                client=client,
                key_lookup=key_lookup,
                resolve=resolve,
                withheld=provider_id in withheld,
            )
        entries.append(ChainEntry(built[provider_id], model_name, attempts))
    return entries
