"""The Anthropic Messages API adapter (streaming, tool use, thinking blocks, prompt caching).

The request body comes from :mod:`relavium_lsp.llm.anthropic_wire` (which places the
``cache_control`` breakpoints) and the stream is decoded by
:mod:`relavium_lsp.llm.anthropic_stream`. ``stop_reason: refusal`` completes with
``stop_reason="content_filter"``; a request the API rejects for policy reasons is an
``ErrorChunk`` of kind ``content_filter``.
"""

from __future__ import annotations

from typing import Any

from relavium_lsp.llm.anthropic_stream import MessagesDecoder
from relavium_lsp.llm.anthropic_wire import ANTHROPIC_VERSION, request_body
from relavium_lsp.llm.http_call import StreamDecoder
from relavium_lsp.llm.seam import LlmRequest
from relavium_lsp.llm.streaming_http import StreamingHttpProvider

DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com"

__all__ = ["DEFAULT_ANTHROPIC_BASE_URL", "AnthropicProvider", "MessagesDecoder"]


class AnthropicProvider(StreamingHttpProvider):
    """Claude models through the Messages API (prompt caching on unless turned off)."""

    prompt_caching = True

    def _api_url(self, path: str) -> str:
        base = self._base_url
        return f"{base}/{path}" if base.endswith("/v1") else f"{base}/v1/{path}"

    def _stream_url(self) -> str:
        return self._api_url("messages")

    def _models_url(self) -> str:
        return self._api_url("models?limit=1000")

    def _headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream", "anthropic-version": ANTHROPIC_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def _request_body(self, request: LlmRequest) -> dict[str, Any]:
        return request_body(request, prompt_caching=self.prompt_caching)

    def _decoder(self, content_type: str) -> StreamDecoder:
        return MessagesDecoder(self.provider_id, self._api_key)
