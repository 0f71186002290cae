"""Every provider fault becomes one final, typed, secret-free ErrorChunk (both adapters)."""

from __future__ import annotations

import logging
import socket
import time
from email.utils import formatdate

import httpx
import pytest

from relavium_lsp.llm.seam import ErrorChunk, LlmChunk
from tests.unit.llm.llm_helpers import API_KEY, anthropic, collect, openai, request, text_of
from tests.unit.llm.wire_servers import (
    SSE_HEADERS,
    ScriptedResponse,
    anthropic_error,
    anthropic_events,
    openai_chunk,
    openai_error,
    openai_events,
    sse,
)

ADAPTERS = ["openai", "anthropic"]
MASKED = f"{API_KEY[:6]}****{API_KEY[-4:]}"


def provider_for(kind, server, client, **options):
    factory = openai if kind == "openai" else anthropic
    return factory(server, client, **options)


def error_response(kind, status, message, headers=None, code=None):
    if kind == "openai":
        return openai_error(status, message, code=code, headers=headers)
    error_type = {
        401: "authentication_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "invalid_request_error" if status < 500 else "api_error")
    return anthropic_error(status, error_type, message, headers=headers)


def events_for(kind, texts):
    if kind == "openai":
        return openai_events(text=texts)
    return anthropic_events(text=texts)


def assert_secret_free(text: str) -> None:
    assert API_KEY not in text
    for start in range(len(API_KEY) - 8):
        assert API_KEY[start : start + 8] not in text, text


async def final_error(kind, server, client, **options) -> tuple[list[LlmChunk], ErrorChunk]:
    chunks = await collect(provider_for(kind, server, client, **options).stream(request(model="m")))
    assert isinstance(chunks[-1], ErrorChunk)
    assert sum(isinstance(c, ErrorChunk) for c in chunks) == 1
    return chunks, chunks[-1]


@pytest.mark.parametrize("kind", ADAPTERS)
@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, "auth"),
        (403, "auth"),
        (400, "bad_request"),
        (404, "bad_request"),
        (422, "bad_request"),
        (429, "rate_limit"),
        (500, "overloaded"),
        (502, "overloaded"),
        (503, "overloaded"),
        (529, "overloaded"),
    ],
)
async def test_status_table(kind, status, expected, server, client, caplog):
    caplog.set_level(logging.DEBUG)
    # Providers do echo keys back, whole or masked; neither may reach the user or a log.
    echo = f"Incorrect API key provided: {API_KEY} ({MASKED}); Bearer {API_KEY}"
    server.script(error_response(kind, status, echo))
    _, error = await final_error(kind, server, client)
    assert error.error.kind == expected
    assert error.error.status == status
    assert error.error.retryable == (expected in ("rate_limit", "overloaded"))
    assert_secret_free(error.error.message)
    assert_secret_free(error.model_dump_json())
    assert_secret_free(caplog.text)
    if expected == "auth":
        assert "keys set" in error.error.message


@pytest.mark.parametrize("kind", ADAPTERS)
async def test_rate_limit_retry_after_forms(kind, server, client):
    future = formatdate(time.time() + 30, usegmt=True)
    server.script(
        error_response(kind, 429, "slow down", headers={"retry-after": "7"}),
        error_response(kind, 429, "slow down", headers={"retry-after": future}),
        error_response(
            kind, 429, "slow down", headers={"retry-after-ms": "1500", "retry-after": "9"}
        ),
    )
    waits = []
    for _ in range(3):
        _, error = await final_error(kind, server, client)
        assert error.error.kind == "rate_limit"
        waits.append(error.error.retry_after_s)
    assert waits[0] == 7.0
    assert 20 < waits[1] <= 30
    assert waits[2] == 1.5


@pytest.mark.parametrize("kind", ADAPTERS)
async def test_content_policy_rejection(kind, server, client):
    if kind == "openai":
        response = openai_error(
            400, "Rejected by our safety system", code="content_policy_violation"
        )
    else:
        response = anthropic_error(
            400, "invalid_request_error", "Output blocked by content filtering policy"
        )
    server.script(response)
    _, error = await final_error(kind, server, client)
    assert error.error.kind == "content_filter"
    assert not error.error.retryable


@pytest.mark.parametrize(
    ("kind", "response", "reported"),
    [
        (
            "openai",
            openai_error(
                400,
                "This model's maximum context length is 16385 tokens. However, your messages "
                "resulted in 20,117 tokens. Please reduce the length of the messages.",
                code="context_length_exceeded",
            ),
            20_117,
        ),
        (
            "anthropic",
            anthropic_error(
                400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"
            ),
            208_310,
        ),
        (
            "openai",  # llama.cpp's server: its own type and the counts beside the message
            ScriptedResponse(
                status=400,
                headers={"content-type": "application/json"},
                body=b'{"error": {"code": 400, "message": "the request exceeds the available '
                b'context size, try increasing it", "type": "exceed_context_size_error", '
                b'"n_prompt_tokens": 9120, "n_ctx": 8192}}',
            ),
            9_120,
        ),
        ("openai", openai_error(400, "Please reduce the length: too many tokens"), None),
    ],
)
async def test_a_request_larger_than_the_window_is_context_length(
    kind, response, reported, server, client
):
    server.script(response)
    _, error = await final_error(kind, server, client)
    assert error.error.kind == "context_length"
    assert error.error.reported_tokens == reported
    assert not error.error.retryable  # another model is no answer: the turn compacts (§2.3)


async def test_a_context_length_error_inside_a_stream_is_typed(server, client):
    events = [
        sse(
            {
                "error": {
                    "message": "maximum context length is 4096 tokens; 5000 in the messages",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            }
        )
    ]
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events))
    _, error = await final_error("openai", server, client)
    assert (error.error.kind, error.error.reported_tokens) == ("context_length", 5_000)


@pytest.mark.parametrize("kind", ADAPTERS)
@pytest.mark.parametrize("ending", ["close", "reset"])
async def test_connection_lost_mid_stream_is_transport_and_not_retryable_after_text(
    kind, ending, server, client
):
    texts = ["one ", "two ", "three"]
    events = events_for(kind, texts)
    cut = 3 if kind == "openai" else 5  # after "one two ", before the end of the answer
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events[:cut], ending=ending))
    chunks, error = await final_error(kind, server, client)
    assert error.error.kind == "transport"
    seen = text_of(chunks)
    assert "".join(texts).startswith(seen)
    # Text the user already saw was billed: another model must not be bought for it.
    assert error.error.retryable == (seen == "")
    assert error.error.partial == (seen != "")
    if ending == "close":  # a FIN delivers everything sent before it
        assert seen == "one two "


@pytest.mark.parametrize("kind", ADAPTERS)
@pytest.mark.parametrize("cut", [0, 3])
async def test_stalled_stream_times_out_within_the_deadline(kind, cut, server, client):
    events = events_for(kind, ["a", "b", "c"])
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events[:cut], ending="stall"))
    started = time.monotonic()
    _, error = await final_error(kind, server, client, timeout_s=0.4)
    elapsed = time.monotonic() - started
    assert error.error.kind == "timeout"
    assert "0.4s" in error.error.message
    # Never before the deadline; the message names the deadline that fired. The upper bound
    # only catches a hang: a loaded CI machine may be slow, and latency goals live in bench/.
    assert 0.35 <= elapsed < 30.0
    # The adapter hung up on the stalled server.
    assert await server.wait_for_disconnect(0)


@pytest.mark.parametrize("kind", ADAPTERS)
async def test_connection_refused_is_transport(kind, client):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    class Closed:
        url = f"http://127.0.0.1:{port}"

    chunks = await collect(provider_for(kind, Closed, client).stream(request(model="m")))
    assert len(chunks) == 1 and isinstance(chunks[0], ErrorChunk)
    assert chunks[0].error.kind == "transport"
    assert "could not connect" in chunks[0].error.message


async def test_openai_in_stream_error_is_typed_and_redacted(server, client, caplog):
    caplog.set_level(logging.DEBUG)
    events = [
        sse(openai_chunk({"content": "par"})),
        sse({"error": {"message": f"upstream failed for key {API_KEY}", "type": "server_error"}}),
    ]
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events))
    chunks, error = await final_error("openai", server, client)
    assert text_of(chunks) == "par"
    assert error.error.kind == "overloaded"
    assert_secret_free(error.error.message)
    assert_secret_free(caplog.text)


async def test_unusable_base_url_is_bad_request(client):
    from relavium_lsp.llm.openai_compat import OpenAICompatibleProvider

    provider = OpenAICompatibleProvider(
        "x", base_url="ftp://example.invalid", api_key=None, client=client, timeout_s=1
    )
    chunks = await collect(provider.stream(request()))
    assert chunks[-1].error.kind == "bad_request"


async def test_html_error_page_is_bounded_and_one_line(server, client):
    page = ("<html><body>" + "Bad gateway. " * 5000 + f"{API_KEY}</body></html>").encode()
    server.script(ScriptedResponse(status=502, headers={"content-type": "text/html"}, body=page))
    _, error = await final_error("openai", server, client)
    assert error.error.kind == "overloaded"
    assert "\n" not in error.error.message
    assert len(error.error.message) < 400
    assert_secret_free(error.error.message)


def test_exception_mapping_covers_httpx_tree():
    from relavium_lsp.llm.http_call import CallTarget, error_from_exception

    target = CallTarget("p", "https://user:pw@example.com/v1", {}, 3.0, API_KEY, "hint")
    assert error_from_exception(target, httpx.PoolTimeout("x")).kind == "timeout"
    assert error_from_exception(target, httpx.ConnectTimeout("x")).kind == "timeout"
    assert error_from_exception(target, httpx.RemoteProtocolError("x")).kind == "transport"
    assert error_from_exception(target, httpx.ReadError("x")).kind == "transport"
    assert error_from_exception(target, RuntimeError(API_KEY)).kind == "unknown"
    message = error_from_exception(target, httpx.ReadError(API_KEY)).message
    assert "pw" not in message and API_KEY not in message and "example.com" in message


def test_retry_after_edge_cases_and_error_codes():
    from relavium_lsp.llm.http_call import error_type_kind, parse_retry_after

    def wait(value: str) -> float | None:
        return parse_retry_after(httpx.Headers({"retry-after": value}))

    assert wait("nan") is None
    assert wait("garbage") is None
    assert wait("-5") == 0.0
    assert wait("1e9") == 86_400.0
    assert wait("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert error_type_kind("BadRequestError 400") == "bad_request"
    assert error_type_kind("overloaded_error") == "overloaded"
    assert error_type_kind("invalid_request_error content_policy_violation") == "content_filter"
    assert error_type_kind("something_else") == "unknown"


async def test_missing_key_says_how_to_add_one(server, client):
    server.script(openai_error(401, "You didn't provide an API key."))
    _, error = await final_error("openai", server, client, api_key=None)
    assert error.error.kind == "auth"
    assert "no API key is configured" in error.error.message
    assert "relavium-lsp keys set openai" in error.error.message
    assert "OPENAI_API_KEY" in error.error.message


async def test_nothing_follows_an_in_stream_error_even_with_more_body(server, client):
    # Text before the error, in the same read and in later reads: the error is the last
    # chunk and ends the stream (text learned into an envelope must not slip past it).
    before = [sse(openai_chunk({"content": f"t{i} "})) for i in range(5)]
    after = [sse(openai_chunk({"content": f"late{i} "})) for i in range(5)]
    error = sse({"error": {"message": "boom", "type": "server_error"}})
    body = [b"".join(before), b"".join([*before, error, *after]), b"".join(after)]
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=body))
    chunks = await collect(openai(server, client).stream(request()))
    assert isinstance(chunks[-1], ErrorChunk) and chunks[-1].error.partial
    assert "late" not in text_of(chunks[:-1])
    assert text_of(chunks) == "t0 t1 t2 t3 t4 " * 2
