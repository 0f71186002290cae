"""Every recorded stream in tests/fixtures/streams, replayed through the real adapters.

Each recording is served by a loopback HTTP server, whole and split into 7-byte reads, and
decoded by ``OpenAICompatibleProvider.stream`` / ``AnthropicProvider.stream``. The adapters
must deliver what a whole-document reading of the recording holds (text, reasoning, tool
calls, usage), keep the seam's invariants, end with the stop reason a person expects, and
decode the same chunks however the bytes are cut.
"""

from __future__ import annotations

import pytest

from relavium_lsp.llm.anthropic.provider import MessagesDecoder
from relavium_lsp.llm.http.stream_guard import StreamGuard
from relavium_lsp.llm.openai.provider import ChatCompletionsDecoder
from relavium_lsp.llm.seam import LlmChunk, StopChunk
from tests.unit.llm.corpus import (
    READ_SIZE,
    Recording,
    assert_stream_invariants,
    oracle,
    outcome_of,
    recordings,
    without_generated_ids,
)
from tests.unit.llm.llm_helpers import anthropic, collect, openai, request
from tests.unit.llm.wire_servers import SSE_HEADERS, ScriptedResponse

RECORDINGS = recordings()


def _ids(recording: Recording) -> str:
    return recording.file


def _pieces(body: bytes, size: int) -> list[bytes]:
    return [body[start : start + size] for start in range(0, len(body), size)]


async def _replay(recording: Recording, server, client, pieces: list[bytes]) -> list[LlmChunk]:
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=pieces))
    if recording.adapter == "anthropic":
        provider = anthropic(server, client)
        return await collect(provider.stream(request(model="claude-sonnet-4-5")))
    return await collect(openai(server, client).stream(request()))


def _decode_in_reads(recording: Recording, size: int) -> list[LlmChunk]:
    decoder = (
        MessagesDecoder("corpus", None)
        if recording.adapter == "anthropic"
        else ChatCompletionsDecoder("corpus", None)
    )
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
    assert adapters == {"openai", "anthropic"}
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
