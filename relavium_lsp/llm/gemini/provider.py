"""Gemini through Google's API: ``POST …/models/MODEL:streamGenerateContent?alt=sse``.

The Gemini API (``generativelanguage.googleapis.com``) takes an API key in
``x-goog-api-key``; Vertex AI (:mod:`relavium_lsp.llm.vertex`) the same body under its own
URL with an OAuth token. Google's errors carry a ``status`` and sometimes a ``reason``
(``API_KEY_INVALID`` comes as HTTP 400) and a ``RetryInfo.retryDelay``: both are read.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import httpx

from relavium_lsp.llm.authorized_http import AuthorizedHttpProvider
from relavium_lsp.llm.gemini.stream import GeminiDecoder
from relavium_lsp.llm.gemini.wire import request_body
from relavium_lsp.llm.http_call import CallTarget, StreamDecoder, error_from_status
from relavium_lsp.llm.json_codec import loads
from relavium_lsp.llm.seam import LlmError, LlmRequest
from relavium_lsp.llm.streaming_http import RemoteModel

DEFAULT_GEMINI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
_AUTH_REASONS = frozenset({"API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED", "ACCESS_TOKEN_EXPIRED"})
_DELAY = re.compile(r"^(\d+(?:\.\d+)?)s$")


def _details(body: bytes) -> tuple[set[str], float | None]:
    """The ``reason`` values and the retry delay in a Google error body."""
    try:
        payload = loads(body)
    except ValueError:
        return set(), None
    error = payload.get("error") if isinstance(payload, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    reasons: set[str] = set()
    delay: float | None = None
    for detail in details if isinstance(details, list) else []:
        if not isinstance(detail, dict):
            continue
        if isinstance(detail.get("reason"), str):
            reasons.add(detail["reason"])
        found = _DELAY.match(str(detail.get("retryDelay", "")))
        if found:
            delay = float(found.group(1))
    return reasons, delay


def explain_google_status(
    target: CallTarget, status: int, headers: httpx.Headers, body: bytes
) -> LlmError:
    """The shared mapping, with Google's reasons and retry delays read."""
    error = error_from_status(target, status, headers, body)
    reasons, delay = _details(body)
    if reasons & _AUTH_REASONS:
        return LlmError(
            kind="auth",
            message=(
                f"{target.provider_id}: Google refused the credentials "
                f"({', '.join(sorted(reasons & _AUTH_REASONS))}); check {target.key_hint}"
            ),
            status=status,
        )
    if status == 404:
        return error.model_copy(
            update={"message": f"{error.message} (is the model name right, and served here?)"}
        )
    if delay is not None and error.retry_after_s is None:
        return error.model_copy(update={"retry_after_s": delay})
    return error


class GoogleModelsMixin:
    """Reads Google's model lists (``models[]`` with ``name`` and ``inputTokenLimit``)."""

    def _models_from(self, payload: Any) -> list[RemoteModel]:
        listed = payload.get("models") if isinstance(payload, dict) else None
        if not isinstance(listed, list):
            raise ValueError("the answer has no model list")
        models: list[RemoteModel] = []
        for entry in listed:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                continue
            methods = entry.get("supportedGenerationMethods") or entry.get("supportedActions")
            if isinstance(methods, list) and "generateContent" not in methods:
                continue  # embedding and image models
            limit = entry.get("inputTokenLimit")
            name = entry["name"].rsplit("/", 1)[-1]
            models.append(RemoteModel(name, limit if type(limit) is int and limit > 0 else None))
        return models


class GeminiProvider(GoogleModelsMixin, AuthorizedHttpProvider):
    """Gemini models through the Gemini API with an API key."""

    def _stream_url(self) -> str:
        return f"{self._base_url}/models"

    def _call_url(self, request: LlmRequest) -> str:
        model = quote(request.model.removeprefix("models/"), safe="")
        return f"{self._base_url}/models/{model}:streamGenerateContent?alt=sse"

    def _models_url(self) -> str:
        return f"{self._base_url}/models?pageSize=1000"

    def _request_body(self, request: LlmRequest) -> dict[str, Any]:
        return request_body(request)

    def _decoder(self, content_type: str) -> StreamDecoder:
        framing = "sse" if "text/event-stream" in content_type else "json"
        return GeminiDecoder(self.provider_id, self._secret, framing=framing)

    def _explain(
        self, target: CallTarget, status: int, headers: httpx.Headers, body: bytes
    ) -> LlmError:
        return explain_google_status(target, status, headers, body)
