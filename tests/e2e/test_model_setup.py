"""Setting up a model over a real server process — and trying to make it leak the key.

The server runs with ``--log-level DEBUG`` (pygls then logs every message it handles) and a
keyring that keeps keys in a file (keyrings.alt, chosen explicitly as a headless user would).
After a setup, a chat on the new model, a bad request carrying the key and the same setup as a
``workspace/executeCommand`` command, the key must be in the keyring and in the provider's
``Authorization`` header — and nowhere else: not the log, stderr, the config file, a result,
an error, an event or the transcript.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from relavium_lsp.server import methods
from relavium_lsp.testing.loopback import LoopbackServer, ReceivedRequest, ScriptedResponse
from relavium_lsp.testing.wire_scripts import openai_stream
from tests.e2e.lsp_harness import editor, make_git_workspace

API_KEY = "sk-e2e-setup-9f8e7d6c5b4a3210fedcba9876543210"
KEYRING_ENV = {"PYTHON_KEYRING_BACKEND": "keyrings.alt.file.PlaintextKeyring"}


def model_server() -> LoopbackServer:
    """A local OpenAI-compatible server that wants ``API_KEY`` and serves ``coder-7b``."""

    def respond(request: ReceivedRequest) -> ScriptedResponse:
        if request.headers.get("authorization") != f"Bearer {API_KEY}":
            body = json.dumps({"error": {"message": "bad key", "type": "invalid_api_key"}})
            return ScriptedResponse(status=401, body=body.encode())
        if request.path == "/v1/models":
            body = json.dumps({"data": [{"id": "coder-7b", "object": "model"}]})
            return ScriptedResponse(
                headers={"content-type": "application/json"}, body=body.encode()
            )
        return openai_stream(text=["Set ", "up."], model="coder-7b")

    return LoopbackServer(responder=respond)


def files_under(root: Path) -> str:
    """Every file's text under ``root`` (the keyring's own file left out)."""
    return "\n".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in root.rglob("*")
        if path.is_file() and "python_keyring" not in path.parts and path.suffix != ".db"
    )


async def test_setup_stores_the_key_only_in_the_keyring_and_the_model_answers(
    tmp_path: Path,
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    answers: list[Any] = []
    with model_server() as server:
        async with editor(workspace, home, relavium={}, env=KEYRING_ENV) as client:
            presets = await client.request(methods.LIST_PROVIDER_PRESETS, {})
            params = {
                "preset": "llamacpp",
                "model": "coder-7b",
                "apiKey": API_KEY,
                "baseUrl": f"{server.url}/v1",
            }
            result = await client.request(methods.SETUP_MODEL, params)
            answers.append(result)
            started = await client.request(methods.START_SESSION, {})
            session = started["sessionId"]
            turn = await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "hi"})
            answers += [started, turn]
            answers.append(await client.request(methods.GET_TRANSCRIPT, {"sessionId": session}))
            # The key in a request that fails validation (whitespace in the model name).
            with pytest.raises(JsonRpcException) as invalid:
                await client.request(methods.SETUP_MODEL, {**params, "model": "coder 7b"})
            # The same setup as a command (for clients with only a command palette).
            command = await client.lsp.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command=methods.command_name(methods.SETUP_MODEL), arguments=[params]
                )
            )
            answers.append(command)
            events = list(client.events)
            messages = [message.message for message in client.lsp.messages]
        stderr = client.lsp._server.stderr if client.lsp._server else None
        stderr_text = (await stderr.read()).decode(errors="replace") if stderr else ""
    ids = [preset["id"] for preset in presets["presets"]]
    assert ids[:2] == ["openai", "anthropic"] and "llamacpp" in ids
    assert result["defaultModel"] == "llamacpp/coder-7b"
    assert result["keyStored"] == "file"
    assert result["check"] == {
        "ok": True,
        "message": f"llama.cpp server: {server.url}/v1/models answers with 1 model(s); "
        "serves coder-7b",
    }
    assert started["model"] == "coder-7b"
    assert turn["text"] == "Set up."
    assert command["keyStored"] == "file"
    chat = [r for r in server.requests if r.path == "/v1/chat/completions"]
    assert chat and chat[0].headers["authorization"] == f"Bearer {API_KEY}"
    assert invalid.value.code == -32602 and API_KEY not in str(invalid.value)
    log = (home / ".relavium" / "logs" / "relavium-lsp.log").read_text(encoding="utf-8")
    assert "relavium/setupModel" in log  # pygls did log the requests, at DEBUG
    for where, text in {
        "log": log,
        "stderr": stderr_text,
        "files": files_under(home) + files_under(workspace),
        "answers": json.dumps(answers),
        "events": json.dumps(events),
        "window messages": json.dumps(messages),
    }.items():
        assert API_KEY not in text, where
    keyring_file = next((home / "xdg-data").rglob("keyring_pass.cfg"))
    assert "llamacpp" in keyring_file.read_text(encoding="utf-8")
