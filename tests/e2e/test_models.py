"""relavium/listModels over a real server process: a one-line preset, listed and priced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from relavium_lsp.server import methods
from relavium_lsp.testing.loopback import LoopbackServer, ReceivedRequest, ScriptedResponse
from tests.e2e.lsp_harness import editor, make_git_workspace

MODELS = {"object": "list", "data": [{"id": "qwen2.5-coder:7b", "object": "model"}]}


def _models_server() -> LoopbackServer:
    def respond(request: ReceivedRequest) -> ScriptedResponse:
        body = json.dumps(MODELS).encode() if request.path == "/v1/models" else b"{}"
        status = 200 if request.path == "/v1/models" else 404
        return ScriptedResponse(
            status=status, headers={"content-type": "application/json"}, body=body
        )

    return LoopbackServer(responder=respond)


async def test_list_models_reports_listed_configured_and_priced_models(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    (home / ".relavium").mkdir(parents=True)
    with _models_server() as ollama:
        # One line per provider: the "ollama" preset, pointed at this test's port.
        (home / ".relavium" / "config.toml").write_text(
            f'[providers.ollama]\nbase_url = "{ollama.url}/v1"\nallow_local_endpoint = true\n'
            '[preferences]\ndefault_model = "claude-sonnet-4-5"\n',
            encoding="utf-8",
        )
        async with editor(workspace, home, env={"ANTHROPIC_API_KEY": ""}) as client:
            result = await client.request(methods.LIST_MODELS, {})
            again = await client.request(methods.LIST_MODELS, {"refresh": False})
            with pytest.raises(JsonRpcException) as invalid:
                await client.request(methods.LIST_MODELS, {"refresh": True, "refersh": True})
        assert len(ollama.requests) == 1  # the second call was served from the cache
    assert invalid.value.code == -32602
    by_ref = {model["ref"]: model for model in result["models"]}
    assert by_ref["ollama/qwen2.5-coder:7b"]["listed"] is True
    claude = by_ref["anthropic/claude-sonnet-4-5"]
    assert (claude["configured"], claude["listed"]) == (True, False)
    assert claude["contextWindow"] == 200_000
    assert claude["cacheReadMicrocentsPerMtok"] == 30_000_000
    statuses = {status["providerId"]: status for status in result["providers"]}
    assert statuses["ollama"] == {"providerId": "ollama", "ok": True, "listed": 1}
    assert again == result
    assert not statuses["anthropic"]["ok"]
    assert "relavium-lsp keys set anthropic" in statuses["anthropic"]["message"]
