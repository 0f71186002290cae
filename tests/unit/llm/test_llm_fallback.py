from __future__ import annotations

import pytest

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.fallback import (
    AttemptFailed,
    AttemptStarted,
    ChainEntry,
    default_retry_delay,
    stream_with_fallback,
)
from relavium_lsp.llm.seam import ErrorChunk, LlmError, StopChunk, TextDelta
from tests.unit.llm.llm_helpers import anthropic, openai, request, text_of
from tests.unit.llm.wire_servers import (
    SSE_HEADERS,
    LoopbackServer,
    ScriptedResponse,
    anthropic_error,
    anthropic_error_event,
    anthropic_events,
    openai_error,
    openai_stream,
)


@pytest.fixture
def secondary():
    with LoopbackServer() as running:
        yield running


async def run(entries, **options):
    return [
        item
        async for item in stream_with_fallback(entries, request(model="placeholder"), **options)
    ]


async def no_sleep(seconds: float) -> None:
    raise AssertionError(f"unexpected wait of {seconds}s")


async def test_primary_overloaded_then_secondary_answers(server, secondary, client):
    server.script(anthropic_error(529, "overloaded_error", "Overloaded"))
    secondary.script(openai_stream(text=["from ", "secondary"], usage=(20, 4), model="gpt-4o-mini"))
    entries = [
        ChainEntry(anthropic(server, client), "claude-sonnet-4-5"),
        ChainEntry(openai(secondary, client), "gpt-4o-mini"),
    ]
    items = await run(entries, sleep=no_sleep)
    assert items[0] == AttemptStarted(model="claude-sonnet-4-5", provider_id="anthropic")
    failed = items[1]
    assert isinstance(failed, AttemptFailed)
    assert failed.error.kind == "overloaded" and failed.error.status == 529
    assert items[2] == AttemptStarted(model="gpt-4o-mini", provider_id="openai")
    assert text_of(items) == "from secondary"
    assert items[-1] == StopChunk(
        stop_reason="stop", usage=TokenUsage(input_tokens=20, output_tokens=4)
    )
    assert sum(isinstance(i, StopChunk | ErrorChunk) for i in items) == 1
    assert server.requests[0].json()["model"] == "claude-sonnet-4-5"
    assert secondary.requests[0].json()["model"] == "gpt-4o-mini"


async def test_usage_of_a_failed_attempt_is_reported(server, secondary, client):
    # Anthropic reports input usage in message_start, then the stream fails before any text.
    events = anthropic_events(text=["never"], usage=(300, 0))[:2]
    server.script(
        ScriptedResponse(
            headers=SSE_HEADERS,
            body=[*events, anthropic_error_event("overloaded_error", "busy")],
        )
    )
    secondary.script(openai_stream(text=["ok"], usage=(20, 4)))
    entries = [
        ChainEntry(anthropic(server, client), "claude-sonnet-4-5"),
        ChainEntry(openai(secondary, client), "gpt-4o-mini"),
    ]
    items = await run(entries)
    failed = [i for i in items if isinstance(i, AttemptFailed)]
    assert failed[0].usage == TokenUsage(input_tokens=300, output_tokens=1)
    final = items[-1]
    assert isinstance(final, StopChunk) and final.usage == TokenUsage(
        input_tokens=20, output_tokens=4
    )


async def test_auth_failure_does_not_fall_back(server, secondary, client):
    server.script(openai_error(401, "bad key", error_type="invalid_api_key"))
    entries = [
        ChainEntry(openai(server, client), "gpt-4o"),
        ChainEntry(openai(secondary, client, provider_id="backup"), "gpt-4o-mini"),
    ]
    items = await run(entries, sleep=no_sleep)
    assert [type(i) for i in items] == [AttemptStarted, ErrorChunk]
    assert items[-1].error.kind == "auth"
    assert secondary.requests == []


async def test_retry_same_entry_honours_retry_after(server, client):
    server.script(
        openai_error(429, "slow", headers={"retry-after": "3"}),
        openai_stream(text=["second try"]),
    )
    waits: list[float] = []

    async def record_sleep(seconds: float) -> None:
        waits.append(seconds)

    items = await run(
        [ChainEntry(openai(server, client), "gpt-4o", max_attempts=2)], sleep=record_sleep
    )
    assert waits == [3.0]
    started = [i for i in items if isinstance(i, AttemptStarted)]
    assert [s.attempt for s in started] == [1, 2]
    assert text_of(items) == "second try"


async def test_error_after_visible_tokens_never_switches_model(server, secondary, client):
    events = anthropic_events(text=["partial ", "answer"])[:4]
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events, ending="close"))
    entries = [
        ChainEntry(anthropic(server, client), "claude-sonnet-4-5"),
        ChainEntry(openai(secondary, client), "gpt-4o-mini"),
    ]
    items = await run(entries)
    assert text_of(items) == "partial "
    assert isinstance(items[-1], ErrorChunk) and items[-1].error.kind == "transport"
    assert not any(isinstance(i, AttemptFailed) for i in items)
    assert secondary.requests == []


async def test_exhausted_chain_ends_with_the_last_error(server, secondary, client):
    server.script(openai_error(503, "down"))
    secondary.script(openai_error(429, "busy"), openai_error(500, "broken"))
    entries = [
        ChainEntry(openai(server, client), "a"),
        ChainEntry(openai(secondary, client, provider_id="backup"), "b", max_attempts=2),
    ]
    items = await run(entries, retry_delay=lambda error, attempt: 0.0, sleep=no_sleep)
    kinds = [type(i).__name__ for i in items]
    assert kinds == [
        "AttemptStarted",
        "AttemptFailed",
        "AttemptStarted",
        "AttemptFailed",
        "AttemptStarted",
        "ErrorChunk",
    ]
    assert items[-1].error.status == 500


async def test_empty_chain_is_an_error():
    items = await run([])
    assert len(items) == 1 and items[0].error.kind == "bad_request"


def test_default_retry_delay():
    assert (
        default_retry_delay(LlmError(kind="rate_limit", message="x", retry_after_s=2.5), 1) == 2.5
    )
    assert (
        default_retry_delay(LlmError(kind="rate_limit", message="x", retry_after_s=600), 1) == 8.0
    )
    assert default_retry_delay(LlmError(kind="overloaded", message="x"), 1) == 0.5
    assert default_retry_delay(LlmError(kind="overloaded", message="x"), 3) == 2.0


async def test_text_delta_type_is_preserved(server, client):
    server.script(openai_stream(text=["x"]))
    items = await run([ChainEntry(openai(server, client), "m")])
    assert TextDelta(text="x") in items
