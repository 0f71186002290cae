"""What every HTTP provider adapter shares: configuration, the streaming call, model listing.

:class:`StreamingHttpProvider` holds a provider's id, base URL, key, HTTP client and
timeout, and implements :meth:`~StreamingHttpProvider.stream` (one POST through
:func:`~relavium_lsp.llm.http_call.stream_call`, so every fault is a typed final chunk and the
stream guard's promises hold) and :meth:`~StreamingHttpProvider.list_models` (one GET of the
provider's ``/models`` endpoint). An adapter supplies only what differs between wire formats:
its URLs, auth headers, request body, stream decoder and how its model list reads.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from relavium_lsp.llm.catalog import context_window_for
from relavium_lsp.llm.http_call import (
    CallTarget,
    StreamDecoder,
    error_from_exception,
    error_from_status,
    stream_call,
)
from relavium_lsp.llm.json_codec import loads
from relavium_lsp.llm.keys import key_env_var
from relavium_lsp.llm.seam import LlmChunk, LlmError, LlmRequest, ProviderCapabilities

_MODELS_BODY_LIMIT = 4 * 1024 * 1024
_MODELS_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class RemoteModel:
    """One model a provider's ``/models`` endpoint lists."""

    id: str
    context_window: int | None = None


@dataclass(frozen=True)
class ModelsResult:
    """The outcome of asking a provider for its models: the list, or why there is none."""

    models: tuple[RemoteModel, ...] = ()
    error: LlmError | None = None
    url: str = ""


class StreamingHttpProvider(ABC):
    """Base of the HTTP adapters (see the module docstring)."""

    def __init__(
        self,
        provider_id: str,
        *,
        base_url: str,
        api_key: str | None,
        client: httpx.AsyncClient,
        timeout_s: float,
        context_window: int | None = None,
    ) -> None:
        self.provider_id = provider_id
        self._base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._client = client
        self._timeout_s = timeout_s
        self._context_window = context_window
        self.capabilities = ProviderCapabilities(
            streaming=True,
            tools=True,
            reasoning=True,
            needs_key=self._requires_key(),
            key_env_var=key_env_var(provider_id),
        )

    # -- what an adapter supplies ---------------------------------------------------------

    def _requires_key(self) -> bool:
        """Whether calls without an API key are pointless (the vendor's own endpoint)."""
        return True

    @abstractmethod
    def _stream_url(self) -> str:
        """Where a streamed call is POSTed."""

    @abstractmethod
    def _models_url(self) -> str:
        """Where the model list is fetched."""

    @abstractmethod
    def _headers(self) -> dict[str, str]:
        """Headers every request carries (auth included)."""

    @abstractmethod
    def _request_body(self, request: LlmRequest) -> dict[str, Any]:
        """The JSON body of one call."""

    @abstractmethod
    def _decoder(self, content_type: str) -> StreamDecoder:
        """The decoder for a response of this content type."""

    def _models_from(self, payload: Any) -> list[RemoteModel]:
        """The models in a ``/models`` answer (OpenAI's and Anthropic's share ``data``)."""
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise ValueError("the answer has no model list")
        models: list[RemoteModel] = []
        for entry in data:
            if isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"]:
                models.append(RemoteModel(entry["id"], _context_length(entry)))
        return models

    # -- shared behaviour -----------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The configured base URL (without a trailing slash)."""
        return self._base_url

    @property
    def has_key(self) -> bool:
        """Whether an API key will be sent (never the key itself)."""
        return bool(self._api_key)

    def context_window(self, model: str) -> int:
        """The configured window, else the catalog's (conservative when unknown)."""
        return self._context_window or context_window_for(model)

    def _target(self, url: str, timeout_s: float) -> CallTarget:
        hint = f"`relavium-lsp keys set {self.provider_id}` or {self.capabilities.key_env_var}"
        return CallTarget(
            provider_id=self.provider_id,
            url=url,
            headers=self._headers(),
            timeout_s=timeout_s,
            secret=self._api_key,
            key_hint=hint,
        )

    def stream(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        """Stream one call; every failure is a final :class:`ErrorChunk`."""
        return stream_call(
            self._client,
            self._target(self._stream_url(), self._timeout_s),
            lambda: self._request_body(request),
            self._decoder,
        )

    @property
    def models_timeout_s(self) -> float:
        """How long asking for the model list may take."""
        return min(self._timeout_s, _MODELS_TIMEOUT_S)

    async def list_models(self) -> ModelsResult:
        """Ask the provider's ``/models`` endpoint; never raises for a fault."""
        return await self.fetch_models(self._target(self._models_url(), self.models_timeout_s))

    async def fetch_models(self, target: CallTarget) -> ModelsResult:
        """GET ``target`` and read a model list from it; never raises for a fault."""
        try:
            response = await self._client.get(
                target.url, headers=dict(target.headers), timeout=target.timeout_s
            )
        except Exception as exc:  # every fault becomes a typed, key-free error
            return ModelsResult(error=error_from_exception(target, exc), url=target.url)
        body = response.content[:_MODELS_BODY_LIMIT]
        if response.status_code >= 400:
            error = error_from_status(target, response.status_code, response.headers, body)
            return ModelsResult(error=error, url=target.url)
        try:
            models = self._models_from(loads(body))
        except ValueError:
            message = (
                f"{self.provider_id}: {target.host} answered {target.url} with something that "
                "is not a model list; is the base URL right?"
            )
            return ModelsResult(error=LlmError(kind="bad_request", message=message), url=target.url)
        return ModelsResult(models=tuple(models), url=target.url)


def _context_length(entry: dict[str, Any]) -> int | None:
    """The context window a model entry states (the field name differs per server)."""
    for key in ("context_length", "context_window", "max_model_len", "max_context_length"):
        value = entry.get(key)
        if type(value) is int and value > 0:
            return value
    meta = entry.get("meta")
    if isinstance(meta, dict):  # llama.cpp server
        value = meta.get("n_ctx_train")
        if type(value) is int and value > 0:
            return value
    return None
