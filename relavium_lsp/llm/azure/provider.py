"""Azure OpenAI deployments over Chat Completions or the Responses API.

``base_url`` is the resource's endpoint (``https://NAME.openai.azure.com``, or an AI
Foundry ``…services.ai.azure.com``); the model name is the **deployment** name. Without
``api_version`` the v1 API is used (``/openai/v1/chat/completions``, ``/openai/v1/responses``,
the deployment as ``model``); with one, the dated API (``/openai/deployments/NAME/chat/
completions?api-version=…`` and ``/openai/responses?api-version=…``). Credentials:
:mod:`~relavium_lsp.llm.azure.entra`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from relavium_lsp.llm.authorized_http import AuthorizedHttpProvider, Credentials
from relavium_lsp.llm.azure.filters import (
    AzureChatDecoder,
    AzureResponsesDecoder,
    explain_azure_status,
)
from relavium_lsp.llm.http_call import CallTarget, StreamDecoder
from relavium_lsp.llm.openai_stream import WholeCompletionDecoder
from relavium_lsp.llm.openai_wire import request_body as chat_request_body
from relavium_lsp.llm.responses.wire import request_body as responses_request_body
from relavium_lsp.llm.seam import LlmError, LlmRequest


class AzureOpenAIProvider(AuthorizedHttpProvider):
    """One Azure OpenAI resource; ``api`` chooses Chat Completions or Responses."""

    def __init__(
        self,
        provider_id: str,
        *,
        credentials: Credentials,
        api: str = "chat",
        api_version: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(provider_id, credentials=credentials, **options)
        self.api = api
        self.api_version = api_version
        base = self._base_url
        for suffix in ("/openai/v1", "/openai"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
        self._endpoint = base

    def _versioned(self, path: str) -> str:
        if self.api_version is None:
            return f"{self._endpoint}/openai/v1/{path}"
        return f"{self._endpoint}/openai/{path}?api-version={quote(self.api_version, safe='')}"

    def _stream_url(self) -> str:
        return self._versioned("responses" if self.api == "responses" else "chat/completions")

    def _call_url(self, request: LlmRequest) -> str:
        if self.api == "chat" and self.api_version is not None:
            deployment = quote(request.model, safe="")
            return self._versioned(f"deployments/{deployment}/chat/completions")
        return self._stream_url()

    def _models_url(self) -> str:
        return self._versioned("models")

    def _headers(self) -> dict[str, str]:
        return {"accept": "text/event-stream"}

    def _request_body(self, request: LlmRequest) -> dict[str, Any]:
        if self.api == "responses":
            return responses_request_body(request)
        # Azure takes max_completion_tokens (its reasoning deployments refuse max_tokens).
        return chat_request_body(request, official=True)

    def _decoder(self, content_type: str) -> StreamDecoder:
        if self.api == "responses":
            return AzureResponsesDecoder(self.provider_id, self._secret)
        if "text/event-stream" in content_type or not content_type:
            return AzureChatDecoder(self.provider_id, self._secret)
        return WholeCompletionDecoder(self.provider_id, self._secret)

    def _explain(
        self, target: CallTarget, status: int, headers: httpx.Headers, body: bytes
    ) -> LlmError:
        error = explain_azure_status(target, status, headers, body)
        if status == 404 and error.kind == "bad_request":
            hint = (
                "no such deployment: the model name must be the deployment's name in this resource"
            )
            if self.api == "responses":
                hint += " (and the deployment must support the Responses API)"
            return error.model_copy(update={"message": f"{error.message} ({hint})"})
        return error
