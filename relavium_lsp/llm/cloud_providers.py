"""Configuration → the cloud platforms' adapters: Azure OpenAI, Gemini, Vertex AI, Bedrock.

Each adapter module is imported here, inside the function that builds it, so a workspace
that uses none of them never loads them (cold start, ``docs/design.md`` §5). Credentials
(:mod:`relavium_lsp.llm.authorized_http`) are decided once per provider:

- ``azure``: the key as ``api-key``, or with ``auth = "entra-id"`` an Entra ID token;
- ``gemini``: the key as ``x-goog-api-key``;
- ``vertex``: Google credentials (``google-auth``);
- ``bedrock``: a Bedrock API key as a bearer token when one is stored, else SigV4 with the
  AWS credential chain (``botocore``).

A provider whose endpoint a project file chose (``withheld``) gets no credentials at all —
no key, no token, no signature — as API keys already are not sent to such endpoints.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from relavium_lsp.contracts.config import ProviderConfig
from relavium_lsp.errors import ProviderSetupError
from relavium_lsp.llm.authorized_http import Credentials, HeaderKeyCredentials, key_hint
from relavium_lsp.llm.http_call import CredentialsUnavailable
from relavium_lsp.llm.keys import key_env_var
from relavium_lsp.llm.seam import Provider

CLOUD_KINDS = ("azure", "gemini", "vertex", "bedrock")
KeyLookup = Callable[[str], str | None]


class WithheldCredentials:
    """Credentials for an endpoint a project file chose: there are none to give."""

    def __init__(self, provider_id: str) -> None:
        self.provider_id = provider_id

    @property
    def source(self) -> str:
        """Why nothing is sent."""
        return "none: the project file chose this endpoint, so no credentials are sent to it"

    @property
    def secrets(self) -> tuple[str, ...]:
        """Nothing to redact."""
        return ()

    async def authorize(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> dict[str, str]:
        """Always refuses, saying where to configure the provider instead."""
        raise CredentialsUnavailable(
            f"{self.provider_id}: this provider's endpoint or credentials were chosen by the "
            "project's .relavium/project.toml, so no credentials are sent to it; configure "
            f"[providers.{self.provider_id}] in ~/.relavium/config.toml instead"
        )


def _first(*values: str | None) -> str | None:
    return next((value for value in values if value), None)


def _env(*names: str) -> str | None:
    return _first(*(os.environ.get(name, "").strip() for name in names))


def _options(config: ProviderConfig, client: httpx.AsyncClient, base_url: str) -> dict[str, Any]:
    return {
        "base_url": base_url,
        "client": client,
        "timeout_s": config.timeout_s,
        "context_window": config.context_window,
    }


def _key_credentials(
    provider_id: str, key_lookup: KeyLookup, header: str, prefix: str = ""
) -> HeaderKeyCredentials:
    return HeaderKeyCredentials(
        provider_id=provider_id,
        key=key_lookup(provider_id),
        header=header,
        hint=key_hint(provider_id, key_env_var(provider_id)),
        prefix=prefix,
    )


def build_cloud_provider(
    provider_id: str,
    kind: str,
    config: ProviderConfig,
    *,
    client: httpx.AsyncClient,
    key_lookup: KeyLookup,
    withheld: bool,
    check: Callable[[str], None],
) -> Provider:
    """The adapter for a ``kind`` in :data:`CLOUD_KINDS` (``check`` vets a custom base URL)."""
    base_url = str(config.base_url).rstrip("/") if config.base_url is not None else None
    if base_url is not None:
        check(base_url)
    builders = {"azure": _azure, "gemini": _gemini, "vertex": _vertex, "bedrock": _bedrock}
    return builders[kind](provider_id, config, client, key_lookup, withheld, base_url)


def _azure(
    provider_id: str,
    config: ProviderConfig,
    client: httpx.AsyncClient,
    key_lookup: KeyLookup,
    withheld: bool,
    base_url: str | None,
) -> Provider:
    from relavium_lsp.llm.azure.entra import EntraIdCredentials
    from relavium_lsp.llm.azure.provider import AzureOpenAIProvider

    if base_url is None:
        raise ProviderSetupError(
            f"provider {provider_id!r} (Azure OpenAI) needs base_url = your resource's "
            'endpoint, e.g. "https://NAME.openai.azure.com"'
        )
    if config.api not in (None, "chat", "responses"):
        raise ProviderSetupError(f'provider {provider_id!r}: api must be "chat" or "responses"')
    credentials: Credentials
    if withheld:
        credentials = WithheldCredentials(provider_id)
    elif config.auth == "entra-id":
        credentials = EntraIdCredentials(
            provider_id, client=client, stored_token=key_lookup(provider_id)
        )
    else:
        credentials = _key_credentials(provider_id, key_lookup, "api-key")
    return AzureOpenAIProvider(
        provider_id,
        credentials=credentials,
        api=config.api or "chat",
        api_version=config.api_version,
        **_options(config, client, base_url),
    )


def _gemini(
    provider_id: str,
    config: ProviderConfig,
    client: httpx.AsyncClient,
    key_lookup: KeyLookup,
    withheld: bool,
    base_url: str | None,
) -> Provider:
    from relavium_lsp.llm.gemini.provider import DEFAULT_GEMINI_BASE_URL, GeminiProvider

    credentials: Credentials = (
        WithheldCredentials(provider_id)
        if withheld
        else _key_credentials(provider_id, key_lookup, "x-goog-api-key")
    )
    return GeminiProvider(
        provider_id,
        credentials=credentials,
        **_options(config, client, base_url or DEFAULT_GEMINI_BASE_URL),
    )


def _vertex(
    provider_id: str,
    config: ProviderConfig,
    client: httpx.AsyncClient,
    key_lookup: KeyLookup,
    withheld: bool,
    base_url: str | None,
) -> Provider:
    from relavium_lsp.llm.vertex.credentials import GoogleCredentials
    from relavium_lsp.llm.vertex.provider import DEFAULT_VERTEX_REGION, VertexProvider, vertex_host

    region = _first(
        config.region, _env("GOOGLE_CLOUD_LOCATION", "CLOUD_ML_REGION"), DEFAULT_VERTEX_REGION
    )
    assert region is not None
    google = GoogleCredentials(provider_id, credentials_file=config.credentials_file)
    credentials: Credentials = WithheldCredentials(provider_id) if withheld else google
    provider = VertexProvider(
        provider_id,
        credentials=credentials,
        region=region,
        project=_first(config.project, _env("GOOGLE_CLOUD_PROJECT", "ANTHROPIC_VERTEX_PROJECT_ID"))
        or google.project_hint(),
        **_options(config, client, base_url or vertex_host(region)),
    )
    provider.prompt_caching = config.prompt_caching
    return provider


def _bedrock(
    provider_id: str,
    config: ProviderConfig,
    client: httpx.AsyncClient,
    key_lookup: KeyLookup,
    withheld: bool,
    base_url: str | None,
) -> Provider:
    from relavium_lsp.llm.bedrock.credentials import AwsCredentials
    from relavium_lsp.llm.bedrock.provider import (
        DEFAULT_BEDROCK_REGION,
        BedrockProvider,
        runtime_url,
    )

    if config.api not in (None, "converse", "messages"):
        raise ProviderSetupError(
            f'provider {provider_id!r}: api must be "converse" or "messages" on Bedrock'
        )
    region = _first(config.region, _env("AWS_REGION", "AWS_DEFAULT_REGION"), DEFAULT_BEDROCK_REGION)
    assert region is not None
    credentials: Credentials
    if withheld:
        credentials = WithheldCredentials(provider_id)
    else:
        api_key = _key_credentials(provider_id, key_lookup, "authorization", prefix="Bearer ")
        credentials = (
            api_key
            if api_key.key
            else AwsCredentials(provider_id, region=region, profile=config.profile)
        )
    provider = BedrockProvider(
        provider_id,
        credentials=credentials,
        region=region,
        api=config.api,
        control_url=base_url,
        **_options(config, client, base_url or runtime_url(region)),
    )
    provider.prompt_caching = config.prompt_caching
    return provider
