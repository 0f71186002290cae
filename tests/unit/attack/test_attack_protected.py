"""Attack: protected files (issue 16 item 5) — in ``auto_edits`` they still ask, every one.

A real server, a real editor client (the e2e harness) and a scripted loopback model that
tries to write one example file for every built-in protected pattern, plus one the user
added; the client rejects every prompt. Nothing protected may be written, and a plain source
file in the same turn must still be written without a prompt.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePath

import pytest

from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.events import ApprovalPreview
from relavium_lsp.server import methods
from relavium_lsp.tools.approval import needs_prompt
from relavium_lsp.tools.base import ApprovalMemory, ApprovalNeed
from relavium_lsp.tools.protected import BUILTIN_PROTECTED_PATTERNS, protected_pattern
from tests.e2e.lsp_harness import configure_loopback_provider, editor, make_git_workspace
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream


def example_path(pattern: str) -> str:
    """A concrete file a pattern protects."""
    return pattern.replace("*.", "demo.").replace("*", "settings.json")


# The issue's own list first, then one example for every built-in pattern and a user pattern.
ISSUE_PATHS = [
    ".relavium/project.toml",
    ".relavium/agents/coder.agent.yaml",
    ".vscode/settings.json",
    ".vscode/tasks.json",
    ".envrc",
    ".gitmodules",
]
USER_PATTERN = "deploy/*.yaml"
PROTECTED_PATHS = list(
    dict.fromkeys(
        [
            *ISSUE_PATHS,
            *(example_path(pattern) for pattern in BUILTIN_PROTECTED_PATTERNS),
            "nested/app/.vscode/settings.json",
            ".VSCode/launch.json",
            "deploy/prod.yaml",
        ]
    )
)
# The jail refuses these before any prompt (a failed tool result, nothing written).
JAIL_REFUSED = {path for path in PROTECTED_PATHS if path.startswith(".git/")}


@pytest.mark.parametrize("path", PROTECTED_PATHS)
def test_every_example_path_is_protected(path: str) -> None:
    assert protected_pattern(PurePath(path), [USER_PATTERN]) is not None


@pytest.mark.parametrize("path", ["src/app.py", "README.md", "vscode/notes.txt", "envrc.txt"])
def test_ordinary_files_are_not_protected(path: str) -> None:
    assert protected_pattern(PurePath(path), [USER_PATTERN]) is None


@pytest.mark.parametrize("mode", ["ask", "auto_edits", "never_ask"])
def test_a_protected_write_asks_in_every_mode_even_after_always_allow(mode: str) -> None:
    class Ctx:
        policy = EffectiveChatPolicy(approval=mode)  # type: ignore[arg-type]
        approvals = ApprovalMemory()

    need = ApprovalNeed(
        action="fs_write",
        preview=ApprovalPreview(path=".envrc"),
        scope_key="/w",
        inside_workspace=True,
        protected=".envrc",
    )
    Ctx.approvals.remember("write_file", "/w")
    assert needs_prompt(Ctx(), "write_file", need, always_ask=False)  # type: ignore[arg-type]


async def test_auto_edits_asks_for_every_protected_path(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        config = home / ".relavium" / "config.toml"
        config.write_text(
            config.read_text(encoding="utf-8")
            + f'\n[chat]\napproval = "auto_edits"\nprotected_paths = ["{USER_PATTERN}"]\n',
            encoding="utf-8",
        )
        agent_file = workspace / ".relavium" / "agents" / "coder.agent.yaml"
        agent_before = agent_file.read_text(encoding="utf-8")
        calls = [
            ScriptedToolCall(
                id=f"call-{index}",
                name="write_file",
                arguments=json.dumps({"path": path, "content": "pwned = true\n"}),
            )
            for index, path in enumerate([*PROTECTED_PATHS, "src/ok.py"])
        ]
        # edit_file writes too: an existing protected file edited in place asks as well.
        calls.append(
            ScriptedToolCall(
                id="call-edit",
                name="edit_file",
                arguments=json.dumps(
                    {
                        "path": ".relavium/agents/coder.agent.yaml",
                        "edits": [{"old": "id: coder", "new": "id: pwned"}],
                    }
                ),
            )
        )
        model.script(
            openai_stream(tool_calls=calls, usage=(80, 20)),
            openai_stream(text=["Done."], usage=(90, 2)),
        )
        async with editor(workspace, home) as client:
            client.decision = "reject"
            started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
            result = await client.request(
                methods.SEND_MESSAGE, {"sessionId": started["sessionId"], "text": "Go."}
            )
            assert result["stopReason"] == "stop", result
            asked = [approval["preview"]["path"] for approval in client.approvals]
            expected = [path for path in PROTECTED_PATHS if path not in JAIL_REFUSED]
            assert asked == [*expected, ".relavium/agents/coder.agent.yaml"]
            tools = [approval["toolId"] for approval in client.approvals]
            assert tools == ["write_file"] * len(expected) + ["edit_file"]

    for path in PROTECTED_PATHS:
        target = workspace / path
        assert not target.exists() or "pwned" not in target.read_text(encoding="utf-8"), path
    assert agent_file.read_text(encoding="utf-8") == agent_before
    assert (workspace / "src" / "ok.py").read_text(encoding="utf-8") == "pwned = true\n"
