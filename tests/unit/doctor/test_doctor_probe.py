"""`relavium-lsp doctor` asks each configured provider for its models and says what is wrong.

Every provider here is a real loopback HTTP server (or a closed port); nothing leaves the
machine.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from relavium_lsp.cli import main
from relavium_lsp.testing.loopback import LoopbackServer, ReceivedRequest, ScriptedResponse

API_KEY = "sk-probe-test-key-0123456789abcdef"
JSON = {"content-type": "application/json"}


@pytest.fixture
def home(isolated_home: Path) -> Path:
    return Path(os.environ["RELAVIUM_HOME"])


def _doctor(capsys: pytest.CaptureFixture[str], workspace: Path) -> tuple[int, dict[str, dict]]:
    code = main(["doctor", "--workspace", str(workspace), "--json"])
    output = capsys.readouterr().out
    assert API_KEY not in output
    return code, {item["check"]: item for item in json.loads(output)["checks"]}


def _server(status: int, models: list[str]) -> LoopbackServer:
    def respond(request: ReceivedRequest) -> ScriptedResponse:
        if request.path != "/v1/models":
            return ScriptedResponse(status=404, headers=JSON, body=b'{"error": "no route"}')
        if status != 200:
            body = {"error": {"message": "Incorrect API key provided", "type": "invalid_api_key"}}
            return ScriptedResponse(status=status, headers=JSON, body=json.dumps(body).encode())
        data = [{"id": model, "object": "model"} for model in models]
        return ScriptedResponse(headers=JSON, body=json.dumps({"data": data}).encode())

    return LoopbackServer(responder=respond)


def _config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text, encoding="utf-8")


def _agent(workspace: Path, model: str) -> None:
    agents = workspace / ".relavium" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "coder.agent.yaml").write_text(
        f"id: coder\nname: Coder\nmodel: {model}\n", encoding="utf-8"
    )


def test_a_reachable_server_with_the_model_is_healthy(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _server(200, ["qwen2.5-coder:7b", "llama3.2"]) as ollama:
        _config(
            home, f'[providers.ollama]\nbase_url = "{ollama.url}/v1"\nallow_local_endpoint = true\n'
        )
        _agent(tmp_path, "ollama/qwen2.5-coder:7b")
        code, found = _doctor(capsys, tmp_path)
    assert code == 0, found
    assert found["Endpoint ollama"]["status"] == "ok"
    assert "2 model(s); serves qwen2.5-coder:7b" in found["Endpoint ollama"]["summary"]


def test_a_model_the_server_does_not_have_is_named_with_what_it_has(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _server(200, ["llama3.2"]) as ollama:
        _config(
            home, f'[providers.ollama]\nbase_url = "{ollama.url}/v1"\nallow_local_endpoint = true\n'
        )
        _agent(tmp_path, "ollama/qwen3:8b")
        code, found = _doctor(capsys, tmp_path)
    assert code == 1
    endpoint = found["Endpoint ollama"]
    assert endpoint["status"] == "problem"
    assert "not 'qwen3:8b' (it has: llama3.2)" in endpoint["summary"]
    assert "ollama pull" in endpoint["hint"]


def test_a_stopped_local_server_says_how_to_start_it(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with LoopbackServer() as closed:
        url = closed.url  # the port is closed once the server stops
    _config(home, f'[providers.ollama]\nbase_url = "{url}/v1"\nallow_local_endpoint = true\n')
    code, found = _doctor(capsys, tmp_path)
    assert code == 1
    endpoint = found["Endpoint ollama"]
    assert endpoint["summary"].startswith("nothing answers at 127.0.0.1:")
    assert "ollama serve" in endpoint["hint"]


def test_a_refused_key_and_a_wrong_path_are_told_apart(
    tmp_path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("TEAM_API_KEY", API_KEY)
    with _server(401, []) as team, _server(200, ["m"]) as lab:
        _config(
            home,
            f'[providers.team]\nkind = "openai"\nbase_url = "{team.url}/v1"\n'
            "allow_local_endpoint = true\n"
            f'[providers.lab]\nkind = "openai"\nbase_url = "{lab.url}"\n'
            "allow_local_endpoint = true\n",
        )
        code, found = _doctor(capsys, tmp_path)
        assert team.requests[0].headers["authorization"] == f"Bearer {API_KEY}"
    assert code == 1
    assert "refused the request (HTTP 401)" in found["Endpoint team"]["summary"]
    assert "relavium-lsp keys set team" in found["Endpoint team"]["hint"]
    assert "(HTTP 404)" in found["Endpoint lab"]["summary"]
    assert "/v1" in found["Endpoint lab"]["hint"]


def test_offline_skips_the_probes(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _server(200, ["m"]) as ollama:
        _config(
            home, f'[providers.ollama]\nbase_url = "{ollama.url}/v1"\nallow_local_endpoint = true\n'
        )
        main(["doctor", "--workspace", str(tmp_path), "--json", "--offline"])
        checks = {item["check"] for item in json.loads(capsys.readouterr().out)["checks"]}
        assert ollama.requests == []
    assert "Endpoint ollama" not in checks
