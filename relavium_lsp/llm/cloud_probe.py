"""The provider check for the cloud platforms: where credentials come from, what is wrong.

``doctor`` (and the editor's model setup, through :mod:`relavium_lsp.llm.provider_probe`)
makes two checks per Azure, Gemini, Vertex or Bedrock provider:

- **credentials** (offline): where they would come from — a stored key, the service-principal
  variables, a Google credentials file, the AWS credential chain and its profile — and
  whether the optional package that reads them is installed; never a value.
- **endpoint** (``doctor`` without ``--offline``): the credentials are used once for real
  (an AWS chain resolved, a Google token refreshed, an Entra token fetched) and the
  platform's model list is read, so a wrong region, endpoint or project, refused
  credentials and (on Bedrock, through ``GetFoundationModelAvailability``) a model the
  account has no access to are told apart, each with what to do.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Any

import httpx

from relavium_lsp.contracts.config import ProviderConfig
from relavium_lsp.llm.authorized_http import AuthorizedHttpProvider
from relavium_lsp.llm.http_call import CredentialsUnavailable
from relavium_lsp.llm.keys import key_env_var, keychain_key
from relavium_lsp.llm.streaming_http import ModelsResult

CLOUD_KINDS = ("azure", "gemini", "vertex", "bedrock")
_PACKAGES = {"bedrock": ("botocore", "bedrock"), "vertex": ("google.auth", "vertex")}


@dataclass(frozen=True)
class CloudFinding:
    """One doctor line: ``ok``, a summary and what to do."""

    ok: bool
    summary: str
    hint: str | None = None


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _key_source(provider_id: str) -> str | None:
    variable = key_env_var(provider_id)
    if keychain_key(provider_id):
        return "the OS keychain"
    if os.environ.get(variable, "").strip():
        return f"${variable}"
    return None


def credential_finding(provider_id: str, settings: ProviderConfig) -> CloudFinding:
    """Where a cloud provider's credentials would come from (nothing is resolved or sent)."""
    kind = settings.kind or ""
    key = _key_source(provider_id)
    variable = key_env_var(provider_id)
    if kind == "bedrock" and key:
        return CloudFinding(True, f"Bedrock API key found in {key} (sent as a bearer token)")
    package = _PACKAGES.get(kind)
    if package is not None and not _installed(package[0]):
        extra = package[1]
        return CloudFinding(
            False,
            f"{kind} credentials need the optional {package[0]} package, which is not installed",
            f"pip install 'relavium-lsp[{extra}]'",
        )
    if kind == "bedrock":
        profile = settings.profile or os.environ.get("AWS_PROFILE")
        where = f"profile {profile!r}" if profile else "environment, default profile, SSO or role"
        return CloudFinding(True, f"SigV4 with the AWS credential chain ({where})")
    if kind == "vertex":
        from relavium_lsp.llm.vertex.credentials import GoogleCredentials

        source = GoogleCredentials(provider_id, credentials_file=settings.credentials_file).source
        if source.startswith("no "):
            return CloudFinding(
                False,
                "no Google credentials found",
                "run `gcloud auth application-default login` or set "
                "$GOOGLE_APPLICATION_CREDENTIALS to a service account key",
            )
        return CloudFinding(True, source)
    if kind == "azure" and settings.auth == "entra-id":
        if key:
            return CloudFinding(True, f"Entra ID token found in {key}")
        names = ("AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET")
        if all(os.environ.get(name, "").strip() for name in names):
            return CloudFinding(True, "Entra ID client credentials in $AZURE_TENANT_ID, …")
        return CloudFinding(
            False,
            "no Entra ID credentials",
            f"set {', '.join(names)}, or `relavium-lsp keys set {provider_id}` with a token",
        )
    if key:
        return CloudFinding(True, f"API key found in {key}")
    return CloudFinding(
        False,
        f"no API key for provider {provider_id!r}",
        f"run `relavium-lsp keys set {provider_id}` or set {variable}",
    )


async def endpoint_finding(
    provider: AuthorizedHttpProvider, settings: ProviderConfig, models: list[str]
) -> CloudFinding:
    """Use the credentials once and read the model list; say what is wrong if anything."""
    kind = settings.kind or ""
    try:
        await provider.credentials.authorize("GET", provider.base_url, {}, b"")
    except CredentialsUnavailable as unavailable:
        return CloudFinding(False, unavailable.message)
    source = provider.credentials.source
    result = await provider.list_models()
    if result.error is not None:
        return _listing_failed(provider, kind, result, source)
    summary = f"credentials from {source} accepted; {len(result.models)} model(s) listed"
    if kind == "bedrock":
        return await _bedrock_access(provider, models, summary)
    if kind == "azure" or not result.models:
        return CloudFinding(True, summary)  # deployments are named by the user, not listed
    served = {model.id for model in result.models}
    missing = [model for model in models if model not in served]
    if missing:
        return CloudFinding(
            False,
            f"{summary}, but not {', '.join(repr(m) for m in missing)}",
            "check the model name (and that it is offered in this region)",
        )
    return CloudFinding(True, summary)


def _listing_failed(
    provider: AuthorizedHttpProvider, kind: str, result: ModelsResult, source: str
) -> CloudFinding:
    error = result.error
    assert error is not None
    host = httpx.URL(result.url).host
    region = getattr(provider, "region", None)
    if error.kind == "transport":
        where = f" (is region {region!r} right?)" if region else " (is base_url right?)"
        return CloudFinding(False, f"cannot reach {host}{where}", "check region / base_url")
    if error.kind == "auth":
        return CloudFinding(False, error.message, f"the credentials came from {source}")
    if error.status == 404 and kind == "azure":
        return CloudFinding(
            False,
            f"{result.url} does not exist (HTTP 404)",
            "base_url must be the resource endpoint, e.g. https://NAME.openai.azure.com",
        )
    return CloudFinding(False, error.message)


async def _bedrock_access(
    provider: AuthorizedHttpProvider, models: list[str], summary: str
) -> CloudFinding:
    """Bedrock's word on each configured model: offered in the region, access granted."""
    from relavium_lsp.llm.bedrock.provider import BedrockProvider

    if not isinstance(provider, BedrockProvider):
        return CloudFinding(True, summary)
    problems: list[str] = []
    for model in models:
        problems.extend(_availability_problems(model, await provider.model_availability(model)))
    if problems:
        return CloudFinding(
            False,
            f"{summary}; " + "; ".join(problems),
            "request access in the Bedrock console (Model access), or pick another region",
        )
    return CloudFinding(True, summary)


def _availability_problems(model: str, payload: Any) -> list[str]:
    if not isinstance(payload, dict):
        return []  # unknown (an older region without the API): the first call will say
    problems = []
    if payload.get("regionAvailability") == "NOT_AVAILABLE":
        problems.append(f"{model} is not offered in this region")
    if payload.get("authorizationStatus") == "NOT_AUTHORIZED":
        problems.append(f"access to {model} is not granted")
    agreement = payload.get("agreementAvailability")
    if isinstance(agreement, dict) and agreement.get("status") not in (None, "AVAILABLE"):
        problems.append(f"{model}'s model agreement is {str(agreement.get('status')).lower()}")
    return problems
