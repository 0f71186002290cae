"""The OpenAI Responses API adapter (``POST {base_url}/responses``, streamed)."""

from __future__ import annotations

from typing import Any

from relavium_lsp.llm.http_call import StreamDecoder
from relavium_lsp.llm.responses.stream import ResponsesDecoder
from relavium_lsp.llm.responses.wire import request_body
from relavium_lsp.llm.seam import LlmRequest
from relavium_lsp.llm.streaming_http import StreamingHttpProvider


class OpenAIResponsesProvider(StreamingHttpProvider):
    """OpenAI's Responses API: the key, base URL and model list of Chat Completions."""

    def _stream_url(self) -> str:
        return f"{self._base_url}/responses"

    def _models_url(self) -> str:
        return f"{self._base_url}/models"

    def _headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        return headers

    def _request_body(self, request: LlmRequest) -> dict[str, Any]:
        return request_body(request)

    def _decoder(self, content_type: str) -> StreamDecoder:
        return ResponsesDecoder(self.provider_id, self._api_key)
