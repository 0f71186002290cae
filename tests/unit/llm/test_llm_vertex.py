"""Vertex AI over loopback servers: google-auth's service-account exchange, Gemini and Claude.

The token endpoint checks the service account's signed assertion with the account's public
key (RS256, the JWT bearer grant), as Google's does, and hands out an access token that the
Vertex server then requires.
"""

from __future__ import annotations

import base64
import json
import sys
from urllib.parse import parse_qs

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from relavium_lsp.llm.http_call import CredentialsUnavailable
from relavium_lsp.llm.seam import ErrorChunk, StopChunk
from relavium_lsp.llm.vertex.credentials import GoogleCredentials, google_auth_module
from relavium_lsp.llm.vertex.provider import VertexProvider
from relavium_lsp.testing.cloud_scripts import gemini_stream, google_error
from relavium_lsp.testing.wire_scripts import SSE_HEADERS, anthropic_events
from tests.unit.llm.llm_helpers import collect, request, text_of
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedResponse

ACCESS_TOKEN = "ya29.vertex-access-token-0123456789"


def _b64(segment: str) -> bytes:
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


@pytest.fixture
def service_account(tmp_path):
    """A service-account key file whose token endpoint is a loopback server checking it."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key()
    assertions: list[dict[str, object]] = []

    def token_endpoint(received) -> ScriptedResponse:
        form = parse_qs(received.body.decode())
        header, claims, signature = form["assertion"][0].split(".")
        public.verify(
            _b64(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256()
        )
        assertions.append({"grant": form["grant_type"][0], **json.loads(_b64(claims))})
        body = json.dumps(
            {"access_token": ACCESS_TOKEN, "expires_in": 3600, "token_type": "Bearer"}
        )
        return ScriptedResponse(headers={"content-type": "application/json"}, body=body.encode())

    with LoopbackServer(responder=token_endpoint) as tokens:
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        path = tmp_path / "service-account.json"
        path.write_text(
            json.dumps(
                {
                    "type": "service_account",
                    "project_id": "my-project",
                    "private_key_id": "key-1",
                    "private_key": pem,
                    "client_email": "relavium@my-project.iam.gserviceaccount.com",
                    "client_id": "1",
                    "token_uri": f"{tokens.url}/token",
                }
            )
        )
        yield path, assertions


def _vertex(server, client, path, region="europe-west4") -> VertexProvider:
    credentials = GoogleCredentials("vertex", credentials_file=str(path), environ={})
    return VertexProvider(
        "vertex",
        credentials=credentials,
        region=region,
        project=credentials.project_hint(),
        base_url=server.url,
        client=client,
        timeout_s=5.0,
    )


async def test_gemini_on_vertex_with_a_service_account(service_account, server, client):
    path, assertions = service_account
    server.script(gemini_stream(text=["Bonjour"]), gemini_stream(text=["encore"]))
    provider = _vertex(server, client, path)
    first = await collect(provider.stream(request(model="gemini-2.5-flash")))
    await collect(provider.stream(request(model="gemini-2.5-flash")))
    assert text_of(first) == "Bonjour"
    assert len(assertions) == 1  # the token is refreshed only when it expires
    assert assertions[0]["grant"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert assertions[0]["iss"] == "relavium@my-project.iam.gserviceaccount.com"
    assert "cloud-platform" in str(assertions[0]["scope"])
    sent = server.requests[0]
    assert sent.path == (
        "/v1/projects/my-project/locations/europe-west4/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert sent.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert "credentials_file" in provider.credentials.source


async def test_claude_on_vertex_speaks_messages_through_stream_raw_predict(
    service_account, server, client
):
    path, _ = service_account
    server.script(
        ScriptedResponse(headers=SSE_HEADERS, body=anthropic_events(text=["Hi"], cache=(500, 0)))
    )
    chunks = await collect(
        _vertex(server, client, path, region="global").stream(
            request(model="claude-sonnet-4-5@20250929", system="s")
        )
    )
    assert text_of(chunks) == "Hi"
    assert isinstance(chunks[-1], StopChunk) and chunks[-1].usage.cache_read_tokens == 500
    sent = server.requests[0]
    assert sent.path == (
        "/v1/projects/my-project/locations/global/publishers/anthropic/models/"
        "claude-sonnet-4-5@20250929:streamRawPredict"
    )
    body = sent.json()
    assert body["anthropic_version"] == "vertex-2023-10-16" and "model" not in body
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}


async def test_a_refused_call_names_the_project_and_not_the_token(service_account, server, client):
    path, _ = service_account
    server.script(google_error(403, "PERMISSION_DENIED", f"Permission denied {ACCESS_TOKEN}"))
    chunks = await collect(_vertex(server, client, path).stream(request(model="gemini-2.5-pro")))
    final = chunks[-1]
    assert isinstance(final, ErrorChunk) and final.error.kind == "auth"
    assert "my-project" in final.error.message and ACCESS_TOKEN not in final.error.message


async def test_no_google_credentials_fail_at_once_with_advice(
    server, client, tmp_path, monkeypatch
):
    monkeypatch.setattr("relavium_lsp.llm.vertex.credentials.on_google_cloud", lambda: False)
    credentials = GoogleCredentials("vertex", environ={"CLOUDSDK_CONFIG": str(tmp_path)})
    provider = VertexProvider(
        "vertex",
        credentials=credentials,
        project="p",
        base_url=server.url,
        client=client,
        timeout_s=5.0,
    )
    chunks = await collect(provider.stream(request(model="gemini-2.5-pro")))
    final = chunks[-1]
    assert isinstance(final, ErrorChunk) and final.error.kind == "auth"
    assert "gcloud auth application-default login" in final.error.message
    assert server.requests == []


async def test_no_project_is_an_error_saying_where_to_set_it(service_account, server, client):
    path, _ = service_account
    credentials = GoogleCredentials("vertex", credentials_file=str(path), environ={})
    provider = VertexProvider(
        "vertex",
        credentials=credentials,
        project=None,
        base_url=server.url,
        client=client,
        timeout_s=5.0,
    )
    chunks = await collect(provider.stream(request(model="gemini-2.5-pro")))
    assert isinstance(chunks[-1], ErrorChunk) and "GOOGLE_CLOUD_PROJECT" in chunks[-1].error.message


def test_without_google_auth_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "google.auth", None)
    with pytest.raises(CredentialsUnavailable, match=r"relavium-lsp\[vertex\]"):
        google_auth_module()
