"""Credentials for Azure OpenAI: an ``api-key``, or a Microsoft Entra ID access token.

In order:

1. ``auth = "api-key"`` (the default): the key from the keychain or the provider's key
   variable (``AZURE_OPENAI_API_KEY`` for the id ``azure``), sent as the ``api-key`` header
   (:class:`~relavium_lsp.llm.authorized_http.HeaderKeyCredentials`).
2. ``auth = "entra-id"``: a token stored in the keychain under the provider id (for
   people who get one from ``az account get-access-token``), sent as a bearer token; else
   the service-principal variables ``AZURE_TENANT_ID``, ``AZURE_CLIENT_ID`` and
   ``AZURE_CLIENT_SECRET`` — the ones ``az`` and ``azure-identity`` read — exchanged at the
   Entra ID token endpoint (OAuth 2.0 client credentials, scope
   ``https://cognitiveservices.azure.com/.default``) for a token kept until shortly before
   it expires. ``AZURE_AUTHORITY_HOST`` moves the endpoint (sovereign clouds; tests).

Why not ``azure-identity``: the client-credentials exchange is one form POST over the
``httpx`` client every adapter already uses (no crypto of our own: TLS does the work), and
``azure-identity`` would bring ``msal``, ``cryptography`` and its own HTTP stack for it.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import httpx

from relavium_lsp.llm.http_call import CredentialsUnavailable
from relavium_lsp.llm.json_codec import loads
from relavium_lsp.log_secrets import register_secret

COGNITIVE_SERVICES_SCOPE = "https://cognitiveservices.azure.com/.default"
DEFAULT_AUTHORITY = "https://login.microsoftonline.com"
ENV_TENANT, ENV_CLIENT, ENV_SECRET = "AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET"
ENV_AUTHORITY = "AZURE_AUTHORITY_HOST"
# A token is renewed this long before it expires (a call may take minutes).
_RENEW_BEFORE_S = 300.0
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass
class EntraIdCredentials:
    """A bearer token: stored in the keychain, or from the client-credentials exchange."""

    provider_id: str
    client: httpx.AsyncClient
    stored_token: str | None = None
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    clock: Callable[[], float] = time.monotonic
    _token: str | None = None
    _expires_at: float = 0.0
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def source(self) -> str:
        """Where the token comes from (never the token)."""
        if self.stored_token:
            return f"an Entra ID token in the OS keychain ({self.provider_id})"
        if self._service_principal() is not None:
            return f"Entra ID client credentials (${ENV_TENANT}, ${ENV_CLIENT}, ${ENV_SECRET})"
        return "no Entra ID credentials"

    @property
    def secrets(self) -> tuple[str, ...]:
        """The token and the client secret, to be redacted from provider text."""
        found = [self.stored_token, self._token, self.environ.get(ENV_SECRET)]
        return tuple(value for value in found if value)

    def _service_principal(self) -> tuple[str, str, str] | None:
        values = [
            self.environ.get(name, "").strip() for name in (ENV_TENANT, ENV_CLIENT, ENV_SECRET)
        ]
        return (values[0], values[1], values[2]) if all(values) else None

    async def authorize(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> dict[str, str]:
        """``headers`` with ``authorization: Bearer …``."""
        return {**headers, "authorization": f"Bearer {await self.token()}"}

    async def token(self) -> str:
        """A valid access token (exchanged again shortly before the last one expires)."""
        if self.stored_token:
            return self.stored_token
        now = self.clock()
        if self._token and now < self._expires_at:
            return self._token
        async with self._lock:
            if self._token and self.clock() < self._expires_at:
                return self._token
            self._token, lifetime = await self._exchange()
            self._expires_at = self.clock() + max(0.0, lifetime - _RENEW_BEFORE_S)
            return self._token

    def _authority(self) -> str:
        authority = self.environ.get(ENV_AUTHORITY, "").strip() or DEFAULT_AUTHORITY
        if "://" not in authority:
            authority = f"https://{authority}"
        url = httpx.URL(authority)
        if url.scheme != "https" and url.host not in _LOOPBACK_HOSTS:
            raise CredentialsUnavailable(
                f"{self.provider_id}: ${ENV_AUTHORITY} must be an https:// URL, so the client "
                "secret travels encrypted"
            )
        return authority.rstrip("/")

    async def _exchange(self) -> tuple[str, float]:
        principal = self._service_principal()
        if principal is None:
            raise CredentialsUnavailable(
                f"{self.provider_id}: no Entra ID credentials: store a token with "
                f"`relavium-lsp keys set {self.provider_id}`, or set ${ENV_TENANT}, "
                f"${ENV_CLIENT} and ${ENV_SECRET} for a service principal"
            )
        tenant, client_id, secret = principal
        register_secret(secret)
        url = f"{self._authority()}/{tenant}/oauth2/v2.0/token"
        form = {
            "grant_type": "client_credentials",
            "client_id": client_id,
            "client_secret": secret,
            "scope": COGNITIVE_SERVICES_SCOPE,
        }
        try:
            response = await self.client.post(url, data=form, timeout=30.0)
        except httpx.HTTPError as exc:
            raise CredentialsUnavailable(
                f"{self.provider_id}: could not reach the Entra ID token endpoint at "
                f"{httpx.URL(url).host} ({type(exc).__name__})"
            ) from None
        try:
            payload = loads(response.content)
        except ValueError:
            payload = {}
        token = payload.get("access_token") if isinstance(payload, dict) else None
        if response.status_code >= 400 or not isinstance(token, str) or not token:
            code = payload.get("error") if isinstance(payload, dict) else None
            raise CredentialsUnavailable(
                f"{self.provider_id}: Entra ID refused the client credentials "
                f"(HTTP {response.status_code}{f', {code}' if isinstance(code, str) else ''}); "
                f"check ${ENV_TENANT}, ${ENV_CLIENT} and ${ENV_SECRET}"
            )
        register_secret(token)
        return token, _seconds(payload.get("expires_in"))


def _seconds(value: object) -> float:
    """A token's ``expires_in`` (a number, or a string of one), else one hour."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 3600.0
