"""Setting up a model: presets from the table, keychain, user config, the provider's check.

Providers are real loopback HTTP servers; the keychain is keyrings.alt's file backend chosen
explicitly (what a user without an OS keychain may choose) or keyring's "fail" backend (none).
Every test also looks for the key wherever it must not be.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail
from keyrings.alt.file import PlaintextKeyring

from relavium_lsp.contracts import presets
from relavium_lsp.contracts.model_setup import SetupModelParams
from relavium_lsp.engine.api import provider_presets, setup_model
from relavium_lsp.errors import InvalidInput
from relavium_lsp.llm.keys import KEYRING_SERVICE
from relavium_lsp.testing.loopback import LoopbackServer, ReceivedRequest, ScriptedResponse

API_KEY = "sk-setup-test-0123456789abcdefghijklmnop"
JSON = {"content-type": "application/json"}


@pytest.fixture
def file_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PlaintextKeyring]:
    previous = keyring.get_keyring()
    backend = PlaintextKeyring()
    backend.file_path = str(tmp_path / "keyring" / "keyring_pass.cfg")
    keyring.set_keyring(backend)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def no_keychain() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


def models_server(models: list[str], *, status: int = 200) -> LoopbackServer:
    """An OpenAI-compatible ``/v1/models`` that answers ``status`` (401: a refused key)."""

    def respond(request: ReceivedRequest) -> ScriptedResponse:
        if request.path != "/v1/models":
            return ScriptedResponse(status=404, headers=JSON, body=b"{}")
        if status != 200:
            body = {"error": {"message": "Incorrect API key provided", "type": "invalid_api_key"}}
            return ScriptedResponse(status=status, headers=JSON, body=json.dumps(body).encode())
        data = [{"id": model, "object": "model"} for model in models]
        return ScriptedResponse(headers=JSON, body=json.dumps({"data": data}).encode())

    return LoopbackServer(responder=respond)


def everything_written(home: Path, tmp_path: Path) -> str:
    """Every file under the data directory and the workspace (the keyring file aside)."""
    texts = []
    for root in (home, tmp_path / "ws"):
        for path in root.rglob("*") if root.exists() else ():
            if path.is_file():
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(texts)


def test_presets_are_the_hosted_providers_then_the_whole_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    listed = provider_presets()
    assert [p.id for p in listed[:2]] == ["openai", "anthropic"]
    assert [p.id for p in listed[2:]] == list(presets.PROVIDER_PRESETS)
    ollama = next(p for p in listed if p.id == "ollama")
    assert (ollama.local, ollama.needs_key, ollama.kind) == (True, False, "openai")
    assert ollama.base_url == "http://127.0.0.1:11434/v1" and ollama.suggested_models
    # A preset added to the table is offered without touching the setup code.
    added = presets.ProviderPreset("https://models.example/v1", True, False, "Example AI")
    monkeypatch.setitem(presets.PROVIDER_PRESETS, "example", added)
    example = next(p for p in provider_presets() if p.id == "example")
    assert (example.label, example.needs_key, example.suggested_models) == ("Example AI", True, [])


async def test_a_local_server_preset_is_written_and_checked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with models_server(["qwen2.5-coder", "llama3.1"]) as server:
        params = SetupModelParams(
            preset="ollama", model="qwen2.5-coder", base_url=server.url + "/v1"
        )
        result = await setup_model(params, workspace=None, home=home)
    assert result.default_model == "ollama/qwen2.5-coder"
    assert result.key_stored == "none"
    assert result.check.ok, result.check.message
    assert "answers with 2 model(s)" in result.check.message
    assert result.config_path == str(home / "config.toml")
    text = (home / "config.toml").read_text(encoding="utf-8")
    assert 'default_model = "ollama/qwen2.5-coder"' in text
    assert "allow_local_endpoint = true" in text and server.url in text


async def test_the_key_goes_to_the_keyring_only_and_a_refusal_is_explained(
    tmp_path: Path, file_keyring: PlaintextKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    home = tmp_path / "home"
    with models_server([], status=401) as server:
        params = SetupModelParams(
            preset="localai", model="phi-4", api_key=API_KEY, base_url=server.url + "/v1"
        )
        result = await setup_model(params, workspace=None, home=home)
        sent = server.requests[0].headers["authorization"]
    assert sent == f"Bearer {API_KEY}"  # the stored key is the one the check used
    assert result.key_stored == "file"
    assert keyring.get_password(KEYRING_SERVICE, "localai") == API_KEY
    assert not result.check.ok
    assert "refused the request (HTTP 401)" in result.check.message
    assert API_KEY not in json.dumps(result.to_wire())
    assert API_KEY not in everything_written(home, tmp_path)
    assert API_KEY not in caplog.text
    assert API_KEY not in repr(params)


@pytest.mark.parametrize(
    ("preset", "base_url", "expected"),
    [
        ("groq", "https://127.0.0.1:9/v1", "loopback"),  # a hosted preset pointed at this host
        ("vllm", "http://127.0.0.1:9/v1", "nothing answers at 127.0.0.1:9"),  # a closed port
    ],
)
async def test_a_bad_base_url_is_explained_without_the_key(
    tmp_path: Path,
    file_keyring: PlaintextKeyring,
    caplog: pytest.LogCaptureFixture,
    preset: str,
    base_url: str,
    expected: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    home = tmp_path / "home"
    params = SetupModelParams(preset=preset, model="m1", api_key=API_KEY, base_url=base_url)
    result = await setup_model(params, workspace=None, home=home)
    assert not result.check.ok
    assert expected in result.check.message
    assert API_KEY not in json.dumps(result.to_wire()) + everything_written(home, tmp_path)
    assert API_KEY not in caplog.text


async def test_without_a_keychain_nothing_is_stored_and_the_check_says_what_to_do(
    tmp_path: Path, no_keychain: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    home = tmp_path / "home"
    params = SetupModelParams(preset="openai", model="gpt-5-mini", api_key=API_KEY)
    result = await setup_model(params, workspace=None, home=home)
    assert result.key_stored == "none"
    assert not result.check.ok
    assert "The key was not stored" in result.check.message
    assert "OPENAI_API_KEY" in result.check.message
    # The built-in provider needs no table: only the default model is written.
    text = (home / "config.toml").read_text(encoding="utf-8")
    assert text == '[preferences]\ndefault_model = "openai/gpt-5-mini"\n'
    assert API_KEY not in json.dumps(result.to_wire()) + everything_written(home, tmp_path)
    assert API_KEY not in caplog.text


async def test_a_workspace_that_chooses_another_model_is_named(tmp_path: Path) -> None:
    home = tmp_path / "home"
    workspace = tmp_path / "ws"
    (workspace / ".relavium").mkdir(parents=True)
    (workspace / ".relavium" / "project.toml").write_text(
        '[chat]\ndefault_model = "anthropic/claude-haiku-4-5"\n', encoding="utf-8"
    )
    with models_server(["llama3.1"]) as server:
        params = SetupModelParams(preset="vllm", model="llama3.1", base_url=server.url + "/v1")
        result = await setup_model(params, workspace=workspace, home=home)
    assert not result.check.ok
    assert "answers with 1 model(s)" in result.check.message
    assert "chooses anthropic/claude-haiku-4-5 instead" in result.check.message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("model", API_KEY),
        ("model", "gpt-4o" + API_KEY),
        ("base_url", f"https://example.test/{API_KEY}/v1"),
        ("base_url", "https://user:hunter2hunter2@example.test/v1"),
    ],
)
async def test_a_key_in_a_plain_field_is_refused_without_quoting_it(
    tmp_path: Path, field: str, value: str, no_keychain: None
) -> None:
    home = tmp_path / "home"
    fields = {
        "preset": "openrouter",
        "model": "openai/gpt-5-mini",
        "api_key": API_KEY,
        field: value,
    }
    with pytest.raises(InvalidInput) as caught:
        await setup_model(SetupModelParams(**fields), workspace=None, home=home)
    assert API_KEY not in caught.value.message and "hunter2" not in caught.value.message
    assert "refused" in caught.value.message
    assert not (home / "config.toml").exists()


async def test_an_unknown_preset_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="unknown provider preset 'nope'"):
        await setup_model(SetupModelParams(preset="nope", model="m"), workspace=None, home=tmp_path)
