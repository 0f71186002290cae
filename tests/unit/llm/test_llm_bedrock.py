"""Bedrock over a loopback server: event-stream frames, SigV4 verified server-side, errors."""

from __future__ import annotations

import base64
import json
import struct
import sys
import zlib

import pytest

from relavium_lsp.contracts.content import ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from relavium_lsp.llm.authorized_http import HeaderKeyCredentials
from relavium_lsp.llm.bedrock.converse_wire import request_body as converse_body
from relavium_lsp.llm.bedrock.credentials import AwsCredentials, botocore_modules
from relavium_lsp.llm.bedrock.eventstream import (
    EventStreamDecoder,
    EventStreamError,
    encode_message,
)
from relavium_lsp.llm.bedrock.provider import BedrockProvider
from relavium_lsp.llm.http_call import CredentialsUnavailable
from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmMessage,
    LlmRequest,
    ReasoningDelta,
    StopChunk,
    ToolCallEnd,
)
from relavium_lsp.testing.cloud_scripts import (
    ScriptedConverseReasoning,
    bedrock_error,
    bedrock_exception,
    converse_events,
    eventstream_response,
    invoke_events,
)
from relavium_lsp.testing.wire_scripts import ScriptedThinking, ScriptedToolCall, anthropic_events
from tests.unit.llm.llm_helpers import READ_FILE, collect, reasoning_of, request, text_of, user
from tests.unit.llm.sigv4_verifier import verify_sigv4

ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEXAMPLE-session-token-0123456789"
CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


@pytest.fixture
def aws_environment(monkeypatch, tmp_path):
    """AWS credentials in the environment, nothing else (no files, no metadata service)."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none-credentials"))


def _bedrock(server, client, credentials=None, **options) -> BedrockProvider:
    return BedrockProvider(
        "bedrock",
        credentials=credentials or AwsCredentials("bedrock", region="us-west-2"),
        region="us-west-2",
        base_url=server.url,
        client=client,
        timeout_s=5.0,
        **options,
    )


def test_event_stream_frames_decode_across_any_cut_and_corruption_is_caught():
    frames = [
        encode_message({":event-type": "chunk", ":message-type": "event"}, b'{"a":1}'),
        encode_message({":message-type": "exception", ":exception-type": "x"}, "ünïcode".encode()),
    ]
    body = b"".join(frames)
    for size in (1, 7, 13, len(body)):
        decoder = EventStreamDecoder()
        messages = [m for i in range(0, len(body), size) for m in decoder.feed(body[i : i + size])]
        assert [m.headers[":message-type"] for m in messages] == ["event", "exception"]
        assert messages[1].payload.decode() == "ünïcode"
        assert decoder.pending == 0
    for position in (2, 9, 20, len(frames[0]) - 6, len(frames[0]) - 1):
        corrupt = bytearray(frames[0])
        corrupt[position] ^= 0x40
        with pytest.raises(EventStreamError):
            EventStreamDecoder().feed(bytes(corrupt))


def test_an_aws_sdk_test_vector_decodes():
    # aws-sdk-js-v3 packages/eventstream-marshaller TestVectors: int32_header (Apache-2.0).
    encoded = bytes(
        [
            0,
            0,
            0,
            45,
            0,
            0,
            0,
            16,
            65,
            196,
            36,
            184,
            10,
            101,
            118,
            101,
            110,
            116,
            45,
            116,
            121,
            112,
            101,
            4,
            0,
            0,
            160,
            12,
            123,
            39,
            102,
            111,
            111,
            39,
            58,
            39,
            98,
            97,
            114,
            39,
            125,
            54,
            244,
            128,
            160,
        ]
    )
    (message,) = EventStreamDecoder().feed(encoded)
    assert message.headers == {"event-type": 40972}
    assert message.payload == b"{'foo':'bar'}"
    assert struct.unpack(">I", encoded[-4:])[0] == zlib.crc32(encoded[:-4])


async def test_converse_text_reasoning_tools_and_cached_usage_with_a_verified_signature(
    aws_environment, server, client
):
    server.script(
        eventstream_response(
            converse_events(
                reasoning=[
                    ScriptedConverseReasoning(
                        pieces=["Plan: read.", " Then answer."], signature="c2ln"
                    )
                ],
                text=["Reading ", "now."],
                tool_calls=[ScriptedToolCall("tooluse_1", "read_file", '{"path": "ä.py"}')],
                usage=(100, 30),
                cache=(2000, 50),
            )
        )
    )
    provider = _bedrock(server, client)
    chunks = await collect(
        provider.stream(request(model="amazon.nova-pro-v1:0", tools=(READ_FILE,), system="sys"))
    )
    assert reasoning_of(chunks) == "Plan: read. Then answer."
    assert text_of(chunks) == "Reading now."
    call = next(c for c in chunks if isinstance(c, ToolCallEnd))
    assert (call.id, call.name, call.args) == ("tooluse_1", "read_file", {"path": "ä.py"})
    final = chunks[-1]
    assert isinstance(final, StopChunk) and final.stop_reason == "tool_use"
    assert final.usage.input_tokens == 2150 and final.usage.cache_read_tokens == 2000
    assert final.usage.cache_write_tokens == 50 and final.usage.output_tokens == 30
    sent = server.requests[0]
    assert sent.path == "/model/amazon.nova-pro-v1%3A0/converse-stream"
    verify_sigv4(
        sent,
        access_key=ACCESS_KEY,
        secret_key=SECRET_KEY,
        region="us-west-2",
        session_token=SESSION_TOKEN,
    )
    body = sent.json()
    assert body["system"] == [{"text": "sys"}, {"cachePoint": {"type": "default"}}]
    assert body["toolConfig"]["tools"][-1] == {"cachePoint": {"type": "default"}}
    assert "environment variables" in provider.credentials.source
    assert SECRET_KEY not in provider.credentials.source


async def test_a_tampered_body_fails_verification(aws_environment, server, client):
    server.script(eventstream_response(converse_events(text=["ok"])))
    await collect(_bedrock(server, client).stream(request(model="meta.llama3-3-70b-instruct-v1:0")))
    sent = server.requests[0]
    sent.body = sent.body.replace(b"hello", b"HELLO")
    with pytest.raises(AssertionError):
        verify_sigv4(
            sent,
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            region="us-west-2",
            session_token=SESSION_TOKEN,
        )
    assert "cachePoint" not in json.dumps(
        json.loads(server.requests[0].body)
    )  # Llama does not cache


def test_converse_reasoning_signatures_go_back_and_others_stay_out():
    kept = 'bedrock-converse:{"redacted":false,"value":"c2ln"}'
    assistant = LlmMessage(
        role="assistant",
        content=(
            ReasoningPart(text="Plan.", signature=kept),
            ReasoningPart(text="other", signature="gemini:{}"),
            TextPart(text=""),
            ToolCallPart(id="t1", name="read_file", args={"path": "a"}),
        ),
    )
    result = LlmMessage(
        role="tool", content=(ToolResultPart(tool_call_id="t1", result="x", is_error=True),)
    )
    body = converse_body(
        LlmRequest(model="deepseek.r1-v1:0", messages=(assistant, result, user("more"))),
        prompt_caching=True,
    )
    assert body["messages"] == [
        {"role": "user", "content": [{"text": "(continuing an earlier conversation)"}]},
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "Plan.", "signature": "c2ln"}}},
                {"toolUse": {"toolUseId": "t1", "name": "read_file", "input": {"path": "a"}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "t1", "content": [{"text": "x"}], "status": "error"}},
                {"text": "more"},
            ],
        },
    ]


async def test_a_throttling_exception_mid_stream_is_a_rate_limit_after_partial_output(
    aws_environment, server, client
):
    started = converse_events(text=["Half"], metadata=False)[:2]
    events = [*started, bedrock_exception("throttlingException", "Too many tokens, please wait.")]
    server.script(eventstream_response(events))
    chunks = await collect(_bedrock(server, client).stream(request(model="amazon.nova-lite-v1:0")))
    assert text_of(chunks) == "Half"
    final = chunks[-1]
    assert (
        isinstance(final, ErrorChunk) and final.error.kind == "rate_limit" and final.error.partial
    )


@pytest.mark.parametrize(
    ("status", "error_type", "kind", "advice"),
    [
        (403, "AccessDeniedException", "auth", "Model access"),
        (403, "UnrecognizedClientException", "auth", "AWS refused the credentials"),
        (404, "ResourceNotFoundException", "bad_request", "us-west-2"),
        (429, "ThrottlingException", "rate_limit", "ThrottlingException"),
        (503, "ServiceUnavailableException", "overloaded", "ServiceUnavailable"),
    ],
)
async def test_http_errors_are_named_with_advice(
    status, error_type, kind, advice, aws_environment, server, client
):
    server.script(bedrock_error(status, error_type, "the detail"))
    chunks = await collect(_bedrock(server, client).stream(request(model="amazon.nova-micro-v1:0")))
    final = chunks[-1]
    assert (
        isinstance(final, ErrorChunk) and final.error.kind == kind and final.error.status == status
    )
    assert advice in final.error.message
    assert SECRET_KEY not in final.error.message and SESSION_TOKEN not in final.error.message


async def test_claude_goes_through_the_messages_api_inside_chunk_events(
    aws_environment, server, client
):
    messages = anthropic_events(
        thinking=[ScriptedThinking(pieces=["Let me think."], signature="EqQBCkYIARgC")],
        text=["Hi ", "there"],
        cache=(900, 100),
    )
    server.script(eventstream_response(invoke_events(messages)))
    provider = _bedrock(server, client)
    chunks = await collect(provider.stream(request(model=CLAUDE, system="sys", max_tokens=256)))
    assert text_of(chunks) == "Hi there"
    assert [c.signature for c in chunks if isinstance(c, ReasoningDelta) and c.signature] == [
        "EqQBCkYIARgC"
    ]
    final = chunks[-1]
    assert isinstance(final, StopChunk) and final.usage.cache_read_tokens == 900
    sent = server.requests[0]
    assert (
        sent.path
        == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream"
    )
    verify_sigv4(
        sent,
        access_key=ACCESS_KEY,
        secret_key=SECRET_KEY,
        region="us-west-2",
        session_token=SESSION_TOKEN,
    )
    body = sent.json()
    assert body["anthropic_version"] == "bedrock-2023-05-31"
    assert "model" not in body and "stream" not in body
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}


async def test_a_bedrock_api_key_is_a_bearer_token_and_needs_no_botocore(server, client):
    key = HeaderKeyCredentials(
        "bedrock", "ABSKbedrock-api-key-0123456789", "authorization", "hint", prefix="Bearer "
    )
    server.script(eventstream_response(converse_events(text=["ok"])))
    await collect(
        _bedrock(server, client, credentials=key).stream(request(model="amazon.nova-lite-v1:0"))
    )
    assert server.requests[0].headers["authorization"] == "Bearer ABSKbedrock-api-key-0123456789"
    assert "x-amz-date" not in server.requests[0].headers


def test_a_named_profile_from_the_shared_credentials_file(monkeypatch, tmp_path):
    credentials_file = tmp_path / "credentials"
    credentials_file.write_text(
        f"[work]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n"
    )
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials_file))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    credentials = AwsCredentials("bedrock", region="eu-central-1", profile="work")
    headers = credentials.sign(
        "POST",
        "https://bedrock-runtime.eu-central-1.amazonaws.com/model/x/converse-stream",
        {"content-type": "application/json"},
        b"{}",
    )
    assert headers["Authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/")
    assert "shared credentials file" in credentials.source and "'work'" in credentials.source


def test_no_credentials_anywhere_says_what_to_do(monkeypatch, tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(CredentialsUnavailable, match="aws sso login"):
        AwsCredentials("bedrock", region="us-east-1").sign(
            "POST", "https://x/model/m/converse", {}, b""
        )


def test_without_botocore_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "botocore", None)
    monkeypatch.setitem(sys.modules, "botocore.session", None)
    with pytest.raises(CredentialsUnavailable, match=r"relavium-lsp\[bedrock\]"):
        botocore_modules()


def test_invoke_chunk_payloads_are_base64_of_the_messages_event():
    (frame,) = invoke_events([b'event: ping\ndata: {"type":"ping"}\n\n'])
    (message,) = EventStreamDecoder().feed(frame)
    assert base64.b64decode(json.loads(message.payload)["bytes"]) == b'{"type":"ping"}'
