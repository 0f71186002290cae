"""``relavium-lsp acp`` driven by real Node ACP clients: the newest SDK and an old one.

- ``@agentclientprotocol/sdk`` (stable v1 entrypoint) validates every message against the
  current stable schema: config options, slash commands, list/close/resume/load/delete;
- ``@zed-industries/agent-client-protocol`` 0.4.5, still in use, knows eight update kinds and
  answers any other ``session/update`` with -32602. It must see no error — and a control run
  in which that same client claims to be newer (``clientInfo``) shows the errors the update
  gate prevents.

The clients are the scripts in ``acp_node/`` (their SDKs pinned by its lockfile and installed
by ``acp_node/install.sh``); each writes what it saw as JSON.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.unit.acp.acp_client import agent_environment
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

NODE_DIR = Path(__file__).parent / "acp_node"
FIXED = "def add(a, b):\n    return a + b\n\n\nprint(add(2, 3))\n"
EARLY_KINDS = {
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "available_commands_update",
    "current_mode_update",
}


@pytest.fixture(scope="module")
def node_clients() -> Path:
    """The SDKs installed (a no-op once the lockfile's stamp matches)."""
    subprocess.run(["bash", str(NODE_DIR / "install.sh")], check=True, stdout=subprocess.DEVNULL)
    return NODE_DIR


def write_call(call_id: str) -> ScriptedToolCall:
    arguments = json.dumps({"path": "app.py", "content": FIXED})
    return ScriptedToolCall(id=call_id, name="write_file", arguments=arguments)


async def run_client(
    script: Path, home: Path, workspace: Path, out: Path, *flags: str
) -> dict[str, Any]:
    """Run one Node client to completion against a fresh ``relavium-lsp acp``."""
    agent = [sys.executable, "-m", "relavium_lsp", "acp", "--log-level", "DEBUG"]
    env = {**agent_environment(home), "RELAVIUM_ACP_COMMAND": json.dumps(agent)}
    process = await asyncio.create_subprocess_exec(
        "node", str(script), str(out), str(workspace), *flags, env=env, cwd=script.parent
    )
    assert await process.wait() == 0
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert "failure" not in result, result.get("failure")
    return result


def kinds(result: dict[str, Any]) -> list[str]:
    return [update["sessionUpdate"] for update in result["updates"]]


def texts(result: dict[str, Any], kind: str = "agent_message_chunk") -> str:
    return "".join(
        update["content"]["text"] for update in result["updates"] if update["sessionUpdate"] == kind
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_git_workspace(tmp_path / "repo")


def configure(home: Path, workspace: Path, url: str) -> None:
    """The loopback provider, plus a default model: the model selector offers both."""
    configure_loopback_provider(home, workspace, url + "/v1")
    with (home / ".relavium" / "config.toml").open("a", encoding="utf-8") as config:
        config.write('\n[preferences]\ndefault_model = "loop/gpt-4.1"\n')


async def test_the_old_client_sees_no_error_and_still_reaches_modes_and_commands(
    node_clients: Path, tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure(home, workspace, model.url)
        model.script(
            openai_stream(text=["It ", "subtracts."], usage=(40, 5)),
            openai_stream(tool_calls=[write_call("call-w")], usage=(60, 20)),
            openai_stream(text=["Fixed."], usage=(90, 2)),
        )
        result = await run_client(
            node_clients / "old_client.mjs", home, workspace, tmp_path / "old.json"
        )
    assert result["errors"] == []
    seen = kinds(result)
    assert set(seen) <= EARLY_KINDS
    assert "session_info_update" not in seen and "usage_update" not in seen
    assert result["stopReasons"] == ["end_turn", "end_turn", "end_turn"]
    assert "It subtracts." in texts(result)
    # The approval mode is reachable through session modes, which this client knows.
    modes = result["modes"]
    assert modes["currentModeId"] == "ask"
    assert [mode["id"] for mode in modes["availableModes"]] == ["ask", "auto_edits", "never_ask"]
    # After set_mode auto_edits the workspace write went through without a permission prompt.
    assert result["permissions"] == []
    assert result["writes"] == [str(workspace / "app.py")]
    # Spend, which usage_update would carry, is one slash command away.
    commands = [u for u in result["updates"] if u["sessionUpdate"] == "available_commands_update"]
    assert {c["name"] for c in commands[0]["availableCommands"]} >= {"usage", "model", "title"}
    assert "input and 5 output tokens" in texts(result)
    # session/load replayed the history, in kinds this client knows.
    assert "Why does add() look wrong?" in texts(result, "user_message_chunk")


async def test_control_the_same_old_client_claiming_to_be_newer_gets_the_errors(
    node_clients: Path, tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure(home, workspace, model.url)
        model.script(openai_stream(text=["It subtracts."], usage=(40, 5)))
        result = await run_client(
            node_clients / "old_client.mjs",
            home,
            workspace,
            tmp_path / "old-claiming.json",
            "--claim-client-info",
        )
    # Those kinds are what the gate holds back: this SDK rejects each one with -32602.
    rejected = [error for error in result["errors"] if "Error handling notification" in error]
    assert rejected, result["errors"]
    assert all("-32602" in error for error in rejected)
    joined = "\n".join(rejected)
    assert "session_info_update" in joined and "usage_update" in joined
    assert result["stopReasons"] == ["end_turn"]


async def test_the_newest_sdk_client_over_the_stable_session_surface(
    node_clients: Path, tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure(home, workspace, model.url)
        model.script(
            openai_stream(text=["It subtracts."], usage=(40, 5)),
            openai_stream(tool_calls=[write_call("call-w")], usage=(60, 20)),
            openai_stream(text=["Fixed."], usage=(90, 2)),
        )
        result = await run_client(
            node_clients / "current_client.mjs", home, workspace, tmp_path / "current.json"
        )
        asked = [request.json()["model"] for request in model.requests]
    assert result["errors"] == []
    capabilities = result["initialize"]["agentCapabilities"]
    assert capabilities["loadSession"] is True
    assert set(capabilities["sessionCapabilities"]) >= {"list", "resume", "close", "delete"}
    assert "fork" not in capabilities["sessionCapabilities"]

    options = {option["id"]: option for option in result["newSession"]["configOptions"]}
    assert options["model"]["category"] == "model"
    assert options["model"]["currentValue"] == "loop/gpt-4o-mini"
    assert [o["value"] for o in options["model"]["options"]] == [
        "loop/gpt-4o-mini",
        "loop/gpt-4.1",
    ]
    assert options["approval"]["category"] == "mode"
    assert options["approval"]["currentValue"] == "ask"
    assert result["newSession"]["modes"]["currentModeId"] == "ask"

    # set_config_option answers with every option; the next turns ask the chosen model.
    after_model = {o["id"]: o["currentValue"] for o in result["modelSet"]["configOptions"]}
    assert after_model == {"model": "loop/gpt-4.1", "approval": "ask"}
    after_approval = {o["id"]: o["currentValue"] for o in result["approvalSet"]["configOptions"]}
    assert after_approval == {"model": "loop/gpt-4.1", "approval": "auto_edits"}
    assert asked == ["gpt-4o-mini", "gpt-4.1", "gpt-4.1"]
    assert result["permissions"] == []  # auto_edits: a workspace write needs no prompt
    assert result["writes"] == [str(workspace / "app.py")]
    mode_updates = [u for u in result["updates"] if u["sessionUpdate"] == "current_mode_update"]
    assert [u["currentModeId"] for u in mode_updates] == ["auto_edits"]

    seen = kinds(result)
    assert seen.index("available_commands_update") == 0  # right after session/new answered
    usage = [u for u in result["updates"] if u["sessionUpdate"] == "usage_update"]
    assert usage and usage[0]["used"] == 45 and usage[0]["size"] > 0
    titles = [u["title"] for u in result["updates"] if u["sessionUpdate"] == "session_info_update"]
    assert titles[:2] == ["Why does add() look wrong?", "Fixing add()"]
    assert "→ loop/gpt-4.1" in texts(result)  # /model lists the choices, the current marked

    (listed,) = result["listed"]["sessions"]
    assert listed["sessionId"] == result["sessionId"] and listed["title"] == "Fixing add()"
    resumed = {o["id"]: o["currentValue"] for o in result["resumed"]["configOptions"]}
    assert resumed["approval"] == "ask"  # closing forgot this connection's choice
    replayed = result["updates"][result["updatesBeforeLoad"] :]
    assert "Why does add() look wrong?" in "".join(
        u["content"]["text"] for u in replayed if u["sessionUpdate"] == "user_message_chunk"
    )
    assert result["listedAfterDelete"]["sessions"] == []
