"""Shared helpers for the provider tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import httpx

from relavium_lsp.contracts.content import TextPart
from relavium_lsp.llm.anthropic.provider import AnthropicProvider
from relavium_lsp.llm.openai.provider import OpenAICompatibleProvider
from relavium_lsp.llm.seam import LlmChunk, LlmMessage, LlmRequest, ToolSpec
from tests.unit.llm.wire_servers import LoopbackServer

API_KEY = "sk-test-SECRETKEY-0123456789abcdefABCDEF"

READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)


def user(text: str) -> LlmMessage:
    return LlmMessage(role="user", content=(TextPart(text=text),))


def request(text: str = "hello", **fields: object) -> LlmRequest:
    return LlmRequest.model_validate(
        {"model": fields.pop("model", "gpt-4o-mini"), "messages": (user(text),), **fields}
    )


def openai(
    server: LoopbackServer, client: httpx.AsyncClient, **options: object
) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(
        str(options.pop("provider_id", "openai")),
        base_url=f"{server.url}/v1",
        api_key=options.pop("api_key", API_KEY),  # type: ignore[arg-type]
        client=client,
        timeout_s=float(options.pop("timeout_s", 5.0)),  # type: ignore[arg-type]
    )


def anthropic(
    server: LoopbackServer, client: httpx.AsyncClient, **options: object
) -> AnthropicProvider:
    return AnthropicProvider(
        str(options.pop("provider_id", "anthropic")),
        base_url=server.url,
        api_key=options.pop("api_key", API_KEY),  # type: ignore[arg-type]
        client=client,
        timeout_s=float(options.pop("timeout_s", 5.0)),  # type: ignore[arg-type]
    )


async def collect(stream: AsyncIterator[LlmChunk]) -> list[LlmChunk]:
    return [chunk async for chunk in stream]


def text_of(chunks: Sequence[object]) -> str:
    return "".join(getattr(c, "text", "") for c in chunks if getattr(c, "type", "") == "text_delta")


def reasoning_of(chunks: Sequence[object]) -> str:
    return "".join(
        getattr(c, "text", "") for c in chunks if getattr(c, "type", "") == "reasoning_delta"
    )
