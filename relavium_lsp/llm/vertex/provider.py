"""Vertex AI: Gemini (``streamGenerateContent``) and Claude (``streamRawPredict``).

URLs are ``https://REGION-aiplatform.googleapis.com/v1/projects/PROJECT/locations/REGION/
publishers/PUBLISHER/models/MODEL:METHOD`` (the ``global`` region has no region prefix).
A ``claude-*`` model is Anthropic's: the Messages body without ``model`` and with
``anthropic_version: vertex-2023-10-16``, answered with the Messages API's own SSE events
(decoded by the Anthropic adapter's decoder, cache breakpoints and thinking signatures
included). Any other model is Gemini's wire format. The project comes from the provider's
``project``, ``$GOOGLE_CLOUD_PROJECT`` or the credentials file.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from relavium_lsp.llm.anthropic_stream import MessagesDecoder
from relavium_lsp.llm.anthropic_wire import request_body as messages_body
from relavium_lsp.llm.authorized_http import AuthorizedHttpProvider, Credentials
from relavium_lsp.llm.gemini.provider import GoogleModelsMixin, explain_google_status
from relavium_lsp.llm.gemini.stream import GeminiDecoder
from relavium_lsp.llm.gemini.wire import request_body as gemini_body
from relavium_lsp.llm.http_call import (
    CallTarget,
    CredentialsUnavailable,
    DecoderFactory,
    StreamDecoder,
)
from relavium_lsp.llm.seam import LlmError, LlmRequest

VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16"
DEFAULT_VERTEX_REGION = "us-central1"


def vertex_host(region: str) -> str:
    """The regional API host (``global`` has none of its own)."""
    if region == "global":
        return "https://aiplatform.googleapis.com"
    return f"https://{region}-aiplatform.googleapis.com"


def is_claude(model: str) -> bool:
    """Whether a Vertex model name is one of Anthropic's."""
    return model.lower().startswith("claude")


class VertexProvider(GoogleModelsMixin, AuthorizedHttpProvider):
    """Gemini and Claude on Vertex AI (see the module docstring)."""

    prompt_caching = True

    def __init__(
        self,
        provider_id: str,
        *,
        credentials: Credentials,
        region: str = DEFAULT_VERTEX_REGION,
        project: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(provider_id, credentials=credentials, **options)
        self.region = region
        self.project = project

    def _location(self) -> str:
        if not self.project:
            raise CredentialsUnavailable(
                f'{self.provider_id}: no Google Cloud project: set project = "…" under '
                f"[providers.{self.provider_id}] or $GOOGLE_CLOUD_PROJECT"
            )
        project = quote(self.project, safe="")
        return f"{self._base_url}/v1/projects/{project}/locations/{quote(self.region, safe='')}"

    def _stream_url(self) -> str:
        return f"{self._base_url}/v1"

    def _call_url(self, request: LlmRequest) -> str:
        model = quote(request.model, safe="@.-_")
        if is_claude(request.model):
            return f"{self._location()}/publishers/anthropic/models/{model}:streamRawPredict"
        return f"{self._location()}/publishers/google/models/{model}:streamGenerateContent?alt=sse"

    def _models_url(self) -> str:
        return f"{self._base_url}/v1beta1/publishers/google/models?pageSize=1000"

    def _request_body(self, request: LlmRequest) -> dict[str, Any]:
        if is_claude(request.model):
            body = messages_body(request, prompt_caching=self.prompt_caching)
            del body["model"]
            return {"anthropic_version": VERTEX_ANTHROPIC_VERSION, **body}
        return gemini_body(request)

    def _decoder(self, content_type: str) -> StreamDecoder:
        framing = "sse" if "text/event-stream" in content_type else "json"
        return GeminiDecoder(self.provider_id, self._secret, framing=framing)

    def _decoder_for(self, request: LlmRequest) -> DecoderFactory:
        if is_claude(request.model):
            return lambda content_type: MessagesDecoder(self.provider_id, self._secret)
        return self._decoder

    def _explain(
        self, target: CallTarget, status: int, headers: httpx.Headers, body: bytes
    ) -> LlmError:
        error = explain_google_status(target, status, headers, body)
        if status == 403 and error.kind == "auth":
            return error.model_copy(
                update={
                    "message": (
                        f"{self.provider_id}: Vertex AI refused the call (HTTP 403): the "
                        f"credentials ({self.credentials.source}) lack access to project "
                        f"{self.project!r}, or the Vertex AI API is not enabled there"
                    )
                }
            )
        return error
