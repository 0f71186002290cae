"""Azure OpenAI over a loopback server: URLs, api-key and Entra ID auth, content filters."""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest

from relavium_lsp.llm.authorized_http import HeaderKeyCredentials
from relavium_lsp.llm.azure.entra import EntraIdCredentials
from relavium_lsp.llm.azure.provider import AzureOpenAIProvider
from relavium_lsp.llm.seam import ErrorChunk, StopChunk
from relavium_lsp.testing.cloud_scripts import (
    azure_chat_events,
    azure_prompt_filtered,
    responses_stream,
)
from relavium_lsp.testing.wire_scripts import SSE_HEADERS
from tests.unit.llm.llm_helpers import collect, request, text_of
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedResponse

AZURE_KEY = "azure-key-0123456789abcdef0123456789abcdef"
CLIENT_SECRET = "entra~client~secret~0123456789ABCDEFGH"


def _azure(server, client, *, credentials=None, **options) -> AzureOpenAIProvider:
    return AzureOpenAIProvider(
        "azure",
        credentials=credentials
        or HeaderKeyCredentials("azure", AZURE_KEY, "api-key", "`relavium-lsp keys set azure`"),
        base_url=server.url,
        client=client,
        timeout_s=5.0,
        **options,
    )


async def test_a_dated_api_version_calls_the_deployment_with_the_api_key(server, client):
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=azure_chat_events(text=["Hel", "lo"])))
    provider = _azure(server, client, api_version="2024-10-21")
    chunks = await collect(provider.stream(request(model="my-gpt4o")))
    assert text_of(chunks) == "Hello"
    final = chunks[-1]
    assert isinstance(final, StopChunk) and final.usage.input_tokens == 18
    sent = server.requests[0]
    assert sent.path == "/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21"
    assert sent.headers["api-key"] == AZURE_KEY
    assert "authorization" not in sent.headers


async def test_the_v1_api_names_the_deployment_as_the_model(server, client):
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=azure_chat_events(text=["ok"])))
    await collect(_azure(server, client).stream(request(model="prod-gpt")))
    assert server.requests[0].path == "/openai/v1/chat/completions"
    assert server.requests[0].json()["model"] == "prod-gpt"


async def test_an_answer_the_filter_stopped_is_an_error_naming_the_filter(server, client):
    events = azure_chat_events(text=["Sure, here"], filtered={"violence": "high"})
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=events))
    chunks = await collect(_azure(server, client).stream(request(model="dep")))
    final = chunks[-1]
    assert isinstance(final, ErrorChunk) and final.error.kind == "content_filter"
    assert "violence (high)" in final.error.message


async def test_a_prompt_the_filter_stopped_names_the_filter_too(server, client):
    server.script(
        azure_prompt_filtered(
            {
                "hate": {"filtered": False, "severity": "safe"},
                "jailbreak": {"filtered": True, "detected": True},
            }
        )
    )
    chunks = await collect(_azure(server, client).stream(request(model="dep")))
    assert isinstance(chunks[-1], ErrorChunk)
    error = chunks[-1].error
    assert error.kind == "content_filter" and error.status == 400
    assert "jailbreak" in error.message and "hate" not in error.message


async def test_an_unknown_deployment_says_the_model_must_be_the_deployment_name(server, client):
    server.script(
        ScriptedResponse(
            status=404,
            headers={"content-type": "application/json"},
            body=(
                b'{"error":{"code":"DeploymentNotFound","message":"The API deployment for '
                b'this resource does not exist."}}'
            ),
        )
    )
    chunks = await collect(_azure(server, client, api="responses").stream(request(model="nope")))
    assert isinstance(chunks[-1], ErrorChunk)
    assert "deployment" in chunks[-1].error.message and "Responses API" in chunks[-1].error.message


async def test_responses_on_azure_go_to_the_v1_responses_path(server, client):
    server.script(responses_stream(text=["hi"]))
    chunks = await collect(
        _azure(server, client, api="responses").stream(request(model="gpt-5-dep"))
    )
    assert text_of(chunks) == "hi"
    assert server.requests[0].path == "/openai/v1/responses"
    assert server.requests[0].json()["store"] is False


async def test_a_missing_key_is_an_auth_error_that_says_how_to_add_one(server, client):
    credentials = HeaderKeyCredentials(
        "azure", None, "api-key", "`relavium-lsp keys set azure` or AZURE_OPENAI_API_KEY"
    )
    chunks = await collect(
        _azure(server, client, credentials=credentials).stream(request(model="d"))
    )
    assert isinstance(chunks[-1], ErrorChunk) and chunks[-1].error.kind == "auth"
    assert "AZURE_OPENAI_API_KEY" in chunks[-1].error.message
    assert server.requests == []


def _token_endpoint(issued: list[dict[str, list[str]]], *, refuse: bool = False):
    def respond(received) -> ScriptedResponse:
        issued.append(parse_qs(received.body.decode()))
        if refuse:
            return ScriptedResponse(
                status=401,
                headers={"content-type": "application/json"},
                body=b'{"error":"invalid_client"}',
            )
        return ScriptedResponse(
            headers={"content-type": "application/json"},
            body=b'{"token_type":"Bearer","expires_in":3599,"access_token":"eyJ-entra-token"}',
        )

    return respond


async def test_entra_client_credentials_are_exchanged_once_and_sent_as_a_bearer_token(
    server, client
):
    issued: list[dict[str, list[str]]] = []
    with LoopbackServer(responder=_token_endpoint(issued)) as login:
        environ = {
            "AZURE_TENANT_ID": "tenant-1",
            "AZURE_CLIENT_ID": "client-1",
            "AZURE_CLIENT_SECRET": CLIENT_SECRET,
            "AZURE_AUTHORITY_HOST": login.url,
        }
        credentials = EntraIdCredentials("azure", client=client, environ=environ)
        server.script(
            *(
                ScriptedResponse(headers=SSE_HEADERS, body=azure_chat_events(text=["x"]))
                for _ in range(2)
            )
        )
        provider = _azure(server, client, credentials=credentials)
        for _ in range(2):
            await collect(provider.stream(request(model="dep")))
        assert login.requests[0].path == "/tenant-1/oauth2/v2.0/token"
    assert len(issued) == 1  # the token is kept until shortly before it expires
    assert issued[0]["grant_type"] == ["client_credentials"]
    assert issued[0]["scope"] == ["https://cognitiveservices.azure.com/.default"]
    assert issued[0]["client_secret"] == [CLIENT_SECRET]
    assert [r.headers["authorization"] for r in server.requests] == ["Bearer eyJ-entra-token"] * 2
    assert "api-key" not in server.requests[0].headers
    assert (
        "Entra ID client credentials" in credentials.source
        and CLIENT_SECRET not in credentials.source
    )


async def test_refused_entra_credentials_are_an_auth_error_without_the_secret(server, client):
    issued: list[dict[str, list[str]]] = []
    with LoopbackServer(responder=_token_endpoint(issued, refuse=True)) as login:
        environ = {
            "AZURE_TENANT_ID": "t",
            "AZURE_CLIENT_ID": "c",
            "AZURE_CLIENT_SECRET": CLIENT_SECRET,
            "AZURE_AUTHORITY_HOST": login.url,
        }
        credentials = EntraIdCredentials("azure", client=client, environ=environ)
        chunks = await collect(_azure(server, client, credentials=credentials).stream(request()))
    final = chunks[-1]
    assert isinstance(final, ErrorChunk) and final.error.kind == "auth"
    assert "invalid_client" in final.error.message and CLIENT_SECRET not in final.error.message
    assert server.requests == []


@pytest.mark.parametrize("authority", ["http://login.example.com", "http://10.0.0.5"])
async def test_the_client_secret_never_travels_over_plain_http_to_a_remote_host(authority, client):
    environ = {
        "AZURE_TENANT_ID": "t",
        "AZURE_CLIENT_ID": "c",
        "AZURE_CLIENT_SECRET": CLIENT_SECRET,
        "AZURE_AUTHORITY_HOST": authority,
    }
    credentials = EntraIdCredentials("azure", client=client, environ=environ)
    with pytest.raises(Exception, match="https"):
        await credentials.token()


async def test_a_stored_entra_token_is_used_as_is(server, client):
    server.script(ScriptedResponse(headers=SSE_HEADERS, body=azure_chat_events(text=["y"])))
    credentials = EntraIdCredentials("azure", client=client, stored_token="eyJ-stored", environ={})
    await collect(_azure(server, client, credentials=credentials).stream(request()))
    assert server.requests[0].headers["authorization"] == "Bearer eyJ-stored"
    assert "keychain" in credentials.source


async def test_the_filter_is_named_however_the_bytes_are_cut(server, client):
    body = b"".join(azure_chat_events(text=["Sure"], filtered={"self_harm": "medium"}))
    server.script(
        ScriptedResponse(
            headers=SSE_HEADERS, body=[body[i : i + 7] for i in range(0, len(body), 7)]
        )
    )
    chunks = await collect(_azure(server, client).stream(request(model="dep")))
    assert isinstance(chunks[-1], ErrorChunk) and "self_harm (medium)" in chunks[-1].error.message
