"""HTTP adapters whose requests need credentials worked out at call time.

API keys are fixed headers (:class:`~relavium_lsp.llm.streaming_http.StreamingHttpProvider`).
Cloud platforms want more: an OAuth access token that expires (Azure Entra ID, Google),
or a signature over the very bytes sent (AWS SigV4). :class:`AuthorizedHttpProvider` asks
its :class:`Credentials` for the headers of each request just before it goes out — the
body is encoded first so a signature covers exactly what is sent — and turns a missing or
refused credential into an ``auth`` error chunk that says where credentials were looked
for, never what they are.
"""

from __future__ import annotations

import dataclasses
from abc import abstractmethod
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from relavium_lsp.contracts.base import compact_json
from relavium_lsp.llm.http_call import (
    CallTarget,
    CredentialsUnavailable,
    DecoderFactory,
    stream_call,
)
from relavium_lsp.llm.seam import ErrorChunk, LlmChunk, LlmError, LlmRequest
from relavium_lsp.llm.streaming_http import ModelsResult, StreamingHttpProvider


class Credentials(Protocol):
    """Where a provider's credentials come from, and how a request carries them."""

    @property
    def source(self) -> str:
        """Where the credential was found (``doctor`` prints it; never the value)."""
        ...

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values that must never reach a message (redacted from provider text)."""
        ...

    async def authorize(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> dict[str, str]:
        """The headers to send: ``headers`` plus the credential's.

        Raises :class:`CredentialsUnavailable` when there is no usable credential.
        """
        ...


class AuthorizedHttpProvider(StreamingHttpProvider):
    """An adapter that authorizes each request through its :class:`Credentials`."""

    def __init__(self, provider_id: str, *, credentials: Credentials, **options: Any) -> None:
        super().__init__(provider_id, api_key=None, **options)
        self.credentials = credentials

    def _requires_key(self) -> bool:
        return False  # credentials, not a key: ``has_key`` says nothing here

    @property
    def has_key(self) -> bool:
        """Credentials are looked for at call time (``doctor`` reports where)."""
        return True

    def _headers(self) -> dict[str, str]:
        return {"accept": "application/json"}

    def _call_url(self, request: LlmRequest) -> str:
        """Where this request is POSTed (some platforms put the model in the path)."""
        return self._stream_url()

    def _decoder_for(self, request: LlmRequest) -> DecoderFactory:
        """How this request's answer is decoded (some platforms serve several formats)."""
        return self._decoder

    @property
    def _secret(self) -> str | None:
        """The credential value decoders redact from in-stream errors."""
        secrets = self.credentials.secrets
        return secrets[0] if secrets else None

    @abstractmethod
    def _explain(
        self, target: CallTarget, status: int, headers: httpx.Headers, body: bytes
    ) -> LlmError:
        """The error for a non-2xx answer (platforms name their errors in their own way)."""

    def _encoded_body(self, request: LlmRequest) -> bytes:
        """The body as the bytes sent (and signed)."""
        return compact_json(self._request_body(request)).encode()

    def _call_target(self, url: str, timeout_s: float) -> CallTarget:
        return CallTarget(
            provider_id=self.provider_id,
            url=url,
            headers=self._headers(),
            timeout_s=timeout_s,
            secret=self._secret,
            key_hint=self.credentials.source,
        )

    async def _authorized_target(
        self, method: str, url: str, body: bytes, timeout_s: float
    ) -> CallTarget:
        target = self._call_target(url, timeout_s)
        headers = dict(target.headers)
        if body:
            headers["content-type"] = "application/json"
        signed = await self.credentials.authorize(method, url, headers, body)
        return dataclasses.replace(target, headers=signed)

    def stream(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        """Stream one call; a credential that cannot be had is an ``auth`` error chunk."""
        try:
            url = self._call_url(request)
        except CredentialsUnavailable as missing:
            return _failed(LlmError(kind="auth", message=missing.message))
        body = self._encoded_body(request)

        async def authorize(headers: Mapping[str, str], encoded: bytes) -> Mapping[str, str]:
            return await self.credentials.authorize("POST", url, headers, encoded)

        return stream_call(
            self._client,
            self._call_target(url, self._timeout_s),
            lambda: body,
            self._decoder_for(request),
            self._explain,
            authorize,
        )

    async def list_models(self) -> ModelsResult:
        """Ask the platform for its models, authorized like a call; never raises for a fault."""
        url = self._models_url()
        try:
            target = await self._authorized_target("GET", url, b"", self.models_timeout_s)
        except CredentialsUnavailable as missing:
            return ModelsResult(error=LlmError(kind="auth", message=missing.message), url=url)
        return await self.fetch_models(target)


@dataclass
class HeaderKeyCredentials:
    """An API key sent in one header (``prefix`` before it: ``"Bearer "`` for a bearer key)."""

    provider_id: str
    key: str | None
    header: str
    hint: str
    prefix: str = ""

    @property
    def source(self) -> str:
        """Where the key comes from (for errors and ``doctor``)."""
        return self.hint

    @property
    def secrets(self) -> tuple[str, ...]:
        """The key, to be redacted from provider text."""
        return (self.key,) if self.key else ()

    async def authorize(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> dict[str, str]:
        """``headers`` with the key's header."""
        if not self.key:
            raise CredentialsUnavailable(
                f"{self.provider_id}: no API key; add one with {self.hint}"
            )
        return {**headers, self.header: f"{self.prefix}{self.key}"}


def key_hint(provider_id: str, variable: str | None) -> str:
    """How to give a provider its key."""
    hint = f"`relavium-lsp keys set {provider_id}`"
    return f"{hint} or {variable}" if variable else hint


async def _failed(error: LlmError) -> AsyncIterator[LlmChunk]:
    yield ErrorChunk(error=error)
