"""Every recorded stream in tests/fixtures/streams, replayed through the real adapters.

Each recording is served by a loopback HTTP server, whole and split into 7-byte reads, and
decoded by the adapter it was recorded from (Chat Completions, Messages, Responses, Gemini,
Bedrock ConverseStream in its binary event-stream framing). The adapters
must deliver what a whole-document reading of the recording holds (text, reasoning, tool
calls, usage), keep the seam's invariants, end with the stop reason a person expects, and
decode the same chunks however the bytes are cut.
"""

from __future__ import annotations

import pytest

from relavium_lsp.llm.anthropic import MessagesDecoder
from relavium_lsp.llm.authorized_http import HeaderKeyCredentials
from relavium_lsp.llm.bedrock.errors import BedrockContext
from relavium_lsp.llm.bedrock.provider import BedrockProvider
from relavium_lsp.llm.bedrock.streams import ConverseDecoder
from relavium_lsp.llm.gemini.provider import GeminiProvider
from relavium_lsp.llm.gemini.stream import GeminiDecoder
from relavium_lsp.llm.openai_compat import ChatCompletionsDecoder
from relavium_lsp.llm.responses.provider import OpenAIResponsesProvider
from relavium_lsp.llm.responses.stream import ResponsesDecoder
from relavium_lsp.llm.seam import ErrorChunk, LlmChunk, StopChunk
from relavium_lsp.llm.stream_guard import StreamGuard
from tests.unit.llm.corpus import (
    CLOUD_ADAPTERS,
    READ_SIZE,
    Recording,
    assert_stream_invariants,
    oracle,
    outcome_of,
    recordings,
    without_generated_ids,
)
from tests.unit.llm.llm_helpers import API_KEY, anthropic, collect, openai, request
from tests.unit.llm.wire_servers import SSE_HEADERS, ScriptedResponse

RECORDINGS = recordings()


def _ids(recording: Recording) -> str:
    return recording.file


def _pieces(body: bytes, size: int) -> list[bytes]:
    return [body[start : start + size] for start in range(0, len(body), size)]


def _cloud(recording: Recording, server, client):
    if recording.adapter == "responses":
        return OpenAIResponsesProvider(
            "corpus", base_url=f"{server.url}/v1", api_key=API_KEY, client=client, timeout_s=5.0
        )
    key = HeaderKeyCredentials("corpus", API_KEY, "x-api-key", "hint")
    if recording.adapter == "gemini":
        return GeminiProvider(
            "corpus", credentials=key, base_url=server.url, client=client, timeout_s=5.0
        )
    return BedrockProvider(
        "corpus", credentials=key, base_url=server.url, client=client, timeout_s=5.0
    )


_HEADERS = {
    "bedrock": {"content-type": "application/vnd.amazon.eventstream"},
}
_MODELS = {
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-3-pro-preview",
    "bedrock": "amazon.nova-pro-v1:0",
    "responses": "gpt-5",
}


async def _replay(recording: Recording, server, client, pieces: list[bytes]) -> list[LlmChunk]:
    server.script(
        ScriptedResponse(headers=_HEADERS.get(recording.adapter, SSE_HEADERS), body=pieces)
    )
    model = _MODELS.get(recording.adapter, "gpt-4o-mini")
    if recording.adapter == "anthropic":
        provider = anthropic(server, client)
        return await collect(provider.stream(request(model=model)))
    if recording.adapter in CLOUD_ADAPTERS:
        return await collect(_cloud(recording, server, client).stream(request(model=model)))
    return await collect(openai(server, client).stream(request()))


def _decoder(recording: Recording):
    if recording.adapter == "anthropic":
        return MessagesDecoder("corpus", None)
    if recording.adapter == "responses":
        return ResponsesDecoder("corpus", None)
    if recording.adapter == "gemini":
        return GeminiDecoder("corpus", None)
    if recording.adapter == "bedrock":
        return ConverseDecoder(BedrockContext("corpus", "us-east-1", "test"), None)
    return ChatCompletionsDecoder("corpus", None)


def _decode_in_reads(recording: Recording, size: int) -> list[LlmChunk]:
    decoder = _decoder(recording)
    guard = StreamGuard()
    chunks: list[LlmChunk] = []
    for piece in _pieces(recording.body, size):
        chunks += guard.admit(decoder.feed(piece))
    if not guard.ended:
        chunks += guard.admit(decoder.finish())
    return chunks


def test_the_corpus_is_whole_and_every_entry_names_its_source_and_licence():
    assert len(RECORDINGS) >= 10
    adapters = {recording.adapter for recording in RECORDINGS}
    assert adapters == {"openai", "anthropic", *CLOUD_ADAPTERS}
    for recording in RECORDINGS:
        assert recording.source.startswith("https://github.com/"), recording.file
        assert recording.licence in {"MIT", "Apache-2.0"}, recording.file
        assert recording.body, recording.file


@pytest.mark.parametrize("recording", RECORDINGS, ids=_ids)
@pytest.mark.parametrize("read_size", [None, READ_SIZE], ids=["whole", "7-byte-reads"])
async def test_recorded_stream_replays_to_what_it_holds(recording, read_size, server, client):
    body = recording.body
    pieces = [body] if read_size is None else _pieces(body, read_size)
    chunks = await _replay(recording, server, client, pieces)
    assert_stream_invariants(chunks)
    final = chunks[-1]
    if recording.expect_error is not None:
        assert isinstance(final, ErrorChunk), final
        assert final.error.kind == recording.expect_error
        if recording.lines:
            assert outcome_of(chunks).text == oracle(recording).text
        return
    assert isinstance(final, StopChunk), final
    assert final.stop_reason == recording.expect_stop
    assert outcome_of(chunks) == oracle(recording)


@pytest.mark.parametrize("recording", RECORDINGS, ids=_ids)
def test_recorded_stream_decodes_identically_whatever_the_read_size(recording):
    whole = _decode_in_reads(recording, len(recording.body))
    assert_stream_invariants(whole)
    for size in (1, READ_SIZE, 64):
        assert without_generated_ids(_decode_in_reads(recording, size)) == without_generated_ids(
            whole
        ), size


@pytest.mark.parametrize("recording", RECORDINGS, ids=_ids)
def test_recorded_stream_cut_anywhere_keeps_the_invariants(recording):
    body = recording.body
    whole = _decode_in_reads(recording, len(body))
    step = max(1, len(body) // 40)
    for cut in range(0, len(body), step):
        truncated = Recording(**{**recording.__dict__, "body": body[:cut]})
        chunks = _decode_in_reads(truncated, READ_SIZE)
        assert_stream_invariants(chunks)
        # Whatever arrived before the cut is delivered, never more than the whole holds.
        assert outcome_of(chunks).text == outcome_of(whole).text[: len(outcome_of(chunks).text)]
