"""The OpenAI-compatible Chat Completions adapter (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, …).

Requests are sent with ``stream: true`` and ``stream_options.include_usage`` so the last
event carries token usage (including ``prompt_tokens_details.cached_tokens``, the prompt-cache
reads). The response is decoded by :mod:`relavium_lsp.llm.openai_stream`; a server that
ignores ``stream: true`` and answers with one JSON document is decoded the same way. A
request the provider rejects outright for policy reasons is an ``ErrorChunk`` of kind
``content_filter`` (see :mod:`relavium_lsp.llm.http_call`).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import Any

import httpx

from relavium_lsp.llm.catalog import api_for
from relavium_lsp.llm.http_call import StreamDecoder
from relavium_lsp.llm.openai_stream import ChatCompletionsDecoder, WholeCompletionDecoder
from relavium_lsp.llm.openai_wire import request_body
from relavium_lsp.llm.seam import LlmChunk, LlmRequest
from relavium_lsp.llm.streaming_http import StreamingHttpProvider

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "ChatCompletionsDecoder",
    "OpenAICompatibleProvider",
    "WholeCompletionDecoder",
]


class OpenAICompatibleProvider(StreamingHttpProvider):
    """A Chat Completions endpoint spoken over streaming HTTP."""

    @property
    def _official(self) -> bool:
        return httpx.URL(self._base_url).host == httpx.URL(DEFAULT_OPENAI_BASE_URL).host

    def _requires_key(self) -> bool:
        # OpenAI itself needs a key; a local or self-hosted server often does not.
        return self._official

    def _stream_url(self) -> str:
        return f"{self._base_url}/chat/completions"

    def _models_url(self) -> str:
        return f"{self._base_url}/models"

    def _headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        return headers

    def _request_body(self, request: LlmRequest) -> dict[str, Any]:
        return request_body(request, official=self._official)

    def stream(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        """Stream one call; a model served only by the Responses API goes there (§5)."""
        if self._official and api_for(request.model) == "responses":
            return self._responses.stream(request)
        return super().stream(request)

    @functools.cached_property
    def _responses(self) -> StreamingHttpProvider:
        # Loaded when first needed (llm/responses/): most sessions never use it.
        from relavium_lsp.llm.responses.provider import OpenAIResponsesProvider

        return OpenAIResponsesProvider(
            self.provider_id,
            base_url=self._base_url,
            api_key=self._api_key,
            client=self._client,
            timeout_s=self._timeout_s,
            context_window=self._context_window,
        )

    def _decoder(self, content_type: str) -> StreamDecoder:
        if "text/event-stream" in content_type or not content_type:
            return ChatCompletionsDecoder(self.provider_id, self._api_key)
        # A server that ignored ``stream: true`` answers with one JSON document.
        return WholeCompletionDecoder(self.provider_id, self._api_key)
