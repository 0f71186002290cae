"""`doctor` on the cloud platforms: where credentials come from and what is wrong, never a value."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from relavium_lsp.cli import main
from relavium_lsp.testing.loopback import LoopbackServer, ReceivedRequest, ScriptedResponse

ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GEMINI_KEY = "AIzaSy-doctor-gemini-key-0123456789abcdef"
JSON = {"content-type": "application/json"}


@pytest.fixture
def home(isolated_home: Path) -> Path:
    return Path(os.environ["RELAVIUM_HOME"])


@pytest.fixture
def aws(monkeypatch, tmp_path):
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))


def _doctor(capsys, workspace: Path, *extra: str) -> dict[str, dict]:
    main(["doctor", "--workspace", str(workspace), "--json", *extra])
    output = capsys.readouterr().out
    for secret in (SECRET_KEY, GEMINI_KEY):
        assert secret not in output
    return {item["check"]: item for item in json.loads(output)["checks"]}


def _config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text, encoding="utf-8")


def _agent(workspace: Path, model: str, provider: str) -> None:
    agents = workspace / ".relavium" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "coder.agent.yaml").write_text(
        f"id: coder\nname: Coder\nmodel: {model}\nprovider: {provider}\n", encoding="utf-8"
    )


def _bedrock(availability: dict[str, object]):
    def respond(request: ReceivedRequest) -> ScriptedResponse:
        assert request.headers["authorization"].startswith("AWS4-HMAC-SHA256")
        if request.path.startswith("/foundation-models"):
            models = {
                "modelSummaries": [
                    {"modelId": "amazon.nova-pro-v1:0", "responseStreamingSupported": True}
                ]
            }
            return ScriptedResponse(headers=JSON, body=json.dumps(models).encode())
        if request.path.startswith("/foundation-model-availability/"):
            return ScriptedResponse(headers=JSON, body=json.dumps(availability).encode())
        return ScriptedResponse(status=404, headers=JSON, body=b"{}")

    return respond


def test_bedrock_credentials_are_named_and_model_access_not_granted_is_reported(
    home, aws, tmp_path, capsys
):
    denied = {
        "authorizationStatus": "NOT_AUTHORIZED",
        "regionAvailability": "AVAILABLE",
        "entitlementAvailability": "AVAILABLE",
    }
    with LoopbackServer(responder=_bedrock(denied)) as server:
        _config(
            home,
            f'[providers.bedrock]\nregion = "us-west-2"\nbase_url = "{server.url}"\n'
            "allow_local_endpoint = true\n",
        )
        workspace = tmp_path / "ws"
        _agent(workspace, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock")
        checks = _doctor(capsys, workspace)
        paths = [request.path for request in server.requests]
    assert checks["Provider bedrock"]["status"] == "ok"
    assert "AWS credential chain" in checks["Provider bedrock"]["summary"]
    endpoint = checks["Endpoint bedrock"]
    assert endpoint["status"] == "problem"
    assert "environment variables" in endpoint["summary"]
    assert (
        "access to us.anthropic.claude-sonnet-4-5-20250929-v1:0 is not granted"
        in endpoint["summary"]
    )
    assert "Model access" in endpoint["hint"]
    assert "/foundation-model-availability/anthropic.claude-sonnet-4-5-20250929-v1%3A0" in paths


def test_bedrock_with_access_granted_is_healthy(home, aws, tmp_path, capsys):
    granted = {"authorizationStatus": "AUTHORIZED", "regionAvailability": "AVAILABLE"}
    with LoopbackServer(responder=_bedrock(granted)) as server:
        _config(
            home, f'[providers.bedrock]\nbase_url = "{server.url}"\nallow_local_endpoint = true\n'
        )
        workspace = tmp_path / "ws"
        _agent(workspace, "amazon.nova-pro-v1:0", "bedrock")
        checks = _doctor(capsys, workspace)
    assert checks["Endpoint bedrock"]["status"] == "ok", checks["Endpoint bedrock"]


def test_gemini_with_a_refused_key_and_a_missing_model(home, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)

    def respond(request: ReceivedRequest) -> ScriptedResponse:
        listed = {
            "models": [
                {
                    "name": "models/gemini-2.5-flash",
                    "inputTokenLimit": 1048576,
                    "supportedGenerationMethods": ["generateContent"],
                }
            ]
        }
        return ScriptedResponse(headers=JSON, body=json.dumps(listed).encode())

    with LoopbackServer(responder=respond) as server:
        _config(
            home,
            f'[providers.gemini]\nbase_url = "{server.url}/v1beta"\nallow_local_endpoint = true\n',
        )
        workspace = tmp_path / "ws"
        _agent(workspace, "gemini-2.5-pro", "gemini")
        checks = _doctor(capsys, workspace)
        assert server.requests[0].headers["x-goog-api-key"] == GEMINI_KEY
    assert checks["Provider gemini"]["summary"].startswith("API key found in $GEMINI_API_KEY")
    assert checks["Endpoint gemini"]["status"] == "problem"
    assert "'gemini-2.5-pro'" in checks["Endpoint gemini"]["summary"]


def test_missing_extras_and_credentials_say_what_to_do(home, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "botocore", None)
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setattr("relavium_lsp.llm.vertex.credentials.on_google_cloud", lambda: False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    _config(
        home,
        '[providers.bedrock]\n[providers.vertex]\nproject = "p"\n[providers.azure]\n'
        'base_url = "https://contoso.openai.azure.com"\nauth = "entra-id"\n',
    )
    checks = _doctor(capsys, tmp_path / "ws", "--offline")
    assert checks["Provider bedrock"]["status"] == "problem"
    assert "relavium-lsp[bedrock]" in checks["Provider bedrock"]["hint"]
    assert checks["Provider vertex"]["status"] == "problem"
    assert "gcloud auth application-default login" in checks["Provider vertex"]["hint"]
    assert checks["Provider azure"]["status"] == "problem"
    assert "AZURE_CLIENT_SECRET" in checks["Provider azure"]["hint"]
