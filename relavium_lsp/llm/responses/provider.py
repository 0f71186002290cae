"""The OpenAI Responses API adapter (``POST {base_url}/responses``, streamed)."""

from __future__ import annotations

from relavium_lsp.llm.http_call import StreamDecoder
from relavium_lsp.llm.openai_compat import OpenAICompatibleProvider
from relavium_lsp.llm.responses.stream import ResponsesDecoder
from relavium_lsp.llm.responses.wire import request_body
from relavium_lsp.llm.seam import LlmRequest
from relavium_lsp.llm.wire_common import http_json


class OpenAIResponsesProvider(OpenAICompatibleProvider):
    """OpenAI's Responses API: Chat Completions' endpoint, key and model list, another path."""

    def _stream_url(self) -> str:
        return f"{self._base_url}/responses"

    def _request_body(self, request: LlmRequest) -> bytes:
        return http_json(request_body(request)).encode()

    def _decoder(self, content_type: str) -> StreamDecoder:
        return ResponsesDecoder(self.provider_id, self._api_key)
