"""Amazon Bedrock: ConverseStream for any model, Claude through the Messages API.

Calls go to ``https://bedrock-runtime.REGION.amazonaws.com/model/ID/…`` (``base_url``
overrides the host): ``converse-stream`` for Converse, ``invoke-with-response-stream`` for
Claude's own Messages body (``anthropic_version: bedrock-2023-05-31``, no ``model``, the
Anthropic adapter's cache breakpoints and thinking signatures). Which one: the provider's
``api`` (``converse`` or ``messages``), else Messages for ``anthropic.claude`` model ids
(inference profiles such as ``us.anthropic.claude-…`` included) and Converse for the rest.
The model list is the control plane's ``GET /foundation-models`` (text models that stream).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from relavium_lsp.llm.anthropic_wire import request_body as messages_body
from relavium_lsp.llm.authorized_http import AuthorizedHttpProvider, Credentials
from relavium_lsp.llm.bedrock.converse_wire import request_body as converse_body
from relavium_lsp.llm.bedrock.errors import BedrockContext, explain_bedrock_status
from relavium_lsp.llm.bedrock.streams import ConverseDecoder, InvokeMessagesDecoder
from relavium_lsp.llm.http_call import (
    CallTarget,
    CredentialsUnavailable,
    DecoderFactory,
    StreamDecoder,
)
from relavium_lsp.llm.json_codec import loads
from relavium_lsp.llm.seam import LlmError, LlmRequest
from relavium_lsp.llm.streaming_http import RemoteModel

BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31"
DEFAULT_BEDROCK_REGION = "us-east-1"
# The geography an inference profile's id starts with (``us.anthropic.claude-…``).
_PROFILE_GEOGRAPHIES = frozenset({"us", "eu", "apac", "au", "ca", "jp", "us-gov", "global"})


def runtime_url(region: str) -> str:
    """The Bedrock runtime endpoint of a region."""
    return f"https://bedrock-runtime.{region}.amazonaws.com"


def uses_messages(model: str, api: str | None) -> bool:
    """Whether ``model`` is called through Claude's Messages API rather than Converse."""
    if api is not None:
        return api == "messages"
    return "anthropic.claude" in model.lower()


class BedrockProvider(AuthorizedHttpProvider):
    """Models on Amazon Bedrock (see the module docstring)."""

    prompt_caching = True

    def __init__(
        self,
        provider_id: str,
        *,
        credentials: Credentials,
        region: str = DEFAULT_BEDROCK_REGION,
        api: str | None = None,
        control_url: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(provider_id, credentials=credentials, **options)
        self.region = region
        self.api = api
        self._control_url = (control_url or f"https://bedrock.{region}.amazonaws.com").rstrip("/")

    @property
    def context(self) -> BedrockContext:
        """What Bedrock error advice needs."""
        return BedrockContext(self.provider_id, self.region, self.credentials.source)

    def _stream_url(self) -> str:
        return f"{self._base_url}/model"

    def _call_url(self, request: LlmRequest) -> str:
        model = quote(request.model, safe="")
        action = "invoke-with-response-stream" if self._messages(request) else "converse-stream"
        return f"{self._base_url}/model/{model}/{action}"

    def _messages(self, request: LlmRequest) -> bool:
        return uses_messages(request.model, self.api)

    def _models_url(self) -> str:
        return f"{self._control_url}/foundation-models?byOutputModality=TEXT"

    def _headers(self) -> dict[str, str]:
        return {"accept": "application/vnd.amazon.eventstream"}

    def _request_body(self, request: LlmRequest) -> dict[str, Any]:
        if self._messages(request):
            body = messages_body(request, prompt_caching=self.prompt_caching)
            for key in ("model", "stream"):
                body.pop(key, None)
            return {"anthropic_version": BEDROCK_ANTHROPIC_VERSION, **body}
        return converse_body(request, prompt_caching=self.prompt_caching)

    def _decoder(self, content_type: str) -> StreamDecoder:
        return ConverseDecoder(self.context, self._secret)

    def _decoder_for(self, request: LlmRequest) -> DecoderFactory:
        if self._messages(request):
            return lambda content_type: InvokeMessagesDecoder(self.context, self._secret)
        return self._decoder

    def _explain(
        self, target: CallTarget, status: int, headers: httpx.Headers, body: bytes
    ) -> LlmError:
        return explain_bedrock_status(self.context, target, status, headers, body)

    async def model_availability(self, model: str) -> dict[str, Any] | None:
        """Bedrock's ``GetFoundationModelAvailability`` for ``model`` (``None`` if unknown).

        Says whether the model is offered in the region and whether the account has been
        granted access — what ``doctor`` reports before a call fails for it.
        """
        head, _, rest = model.partition(".")
        foundation = rest if head in _PROFILE_GEOGRAPHIES and rest else model
        url = f"{self._control_url}/foundation-model-availability/{quote(foundation, safe='')}"
        try:
            target = await self._authorized_target("GET", url, b"", self.models_timeout_s)
            response = await self._client.get(
                target.url, headers=dict(target.headers), timeout=target.timeout_s
            )
            payload = loads(response.content) if response.status_code == 200 else None
        except (CredentialsUnavailable, httpx.HTTPError, ValueError):
            return None
        return payload if isinstance(payload, dict) else None

    def _models_from(self, payload: Any) -> list[RemoteModel]:
        listed = payload.get("modelSummaries") if isinstance(payload, dict) else None
        if not isinstance(listed, list):
            raise ValueError("the answer has no model list")
        return [
            RemoteModel(entry["modelId"])
            for entry in listed
            if isinstance(entry, dict)
            and isinstance(entry.get("modelId"), str)
            and entry.get("responseStreamingSupported") is not False
        ]
