"""Emacs 28 with eglot 1.9: a plain LSP client, no relavium plugin, its own request timeouts.

``scripts/install-emacs.sh`` (run by ``make test``) installs Debian's ``emacs-nox`` and
``elpa-eglot``. The Emacs side is ``emacs/eglot_session.el``: it starts a chat, sends a
message without waiting for a 5-second turn, runs the "Explain" and "Export this chat" code
actions from eglot's own menu, and writes a JSON report of what it saw.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from relavium_lsp.export.workflow_yaml import parse_workflow
from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.unit.llm.wire_servers import LoopbackServer, openai_stream

SCRIPT = Path(__file__).with_name("emacs") / "eglot_session.el"
SERVER_COMMAND = [sys.executable, "-m", "relavium_lsp", "serve", "--log-level", "DEBUG"]
EMACS_DEADLINE_S = 240  # for slow, shared machines; a passing run takes seconds
STORY = [f"part {n} " for n in range(10)]


def emacs_executable() -> str:
    found = shutil.which("emacs")
    if found is None:
        pytest.fail(
            "emacs is not installed: run scripts/install-emacs.sh (make test runs it first)",
            pytrace=False,
        )
    return found


def server_log_tail(home: Path, chars: int = 8000) -> str:
    """The end of the server's own log files: what a failure report needs to be read."""
    logs = sorted((home / ".relavium").rglob("*.log"))
    return "\n".join(f"{log}:\n{log.read_text(errors='replace')[-chars:]}" for log in logs)


def files_under(root: Path) -> list[str]:
    return sorted(
        str(path.relative_to(root)) for path in root.rglob("*") if ".git" not in path.parts
    )


def test_eglot_chats_runs_code_actions_and_exports_without_touching_the_workspace(
    tmp_path: Path,
) -> None:
    emacs = emacs_executable()
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    report_path = tmp_path / "report.json"
    # Longer than the client lets its message send take (2 s).
    slow_story = dataclasses.replace(openai_stream(text=STORY), piece_delay_s=0.5)
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(slow_story, openai_stream(text=["It subtracts b from a."]))
        before = files_under(workspace)
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "RELAVIUM_HOME": str(home / ".relavium"),
            "XDG_CONFIG_HOME": str(home / "xdg-config"),
            "XDG_DATA_HOME": str(home / "xdg-data"),
            "LANG": "C.UTF-8",
            "RELAVIUM_TEST_SERVER": json.dumps(SERVER_COMMAND),
            "RELAVIUM_TEST_WORKSPACE": str(workspace),
            "RELAVIUM_TEST_REPORT": str(report_path),
        }
        finished = subprocess.run(
            [emacs, "--batch", "--no-init-file", "-l", str(SCRIPT)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=EMACS_DEADLINE_S,
            check=False,
        )
    output = finished.stdout + finished.stderr
    assert report_path.exists(), output
    report = json.loads(report_path.read_text(encoding="utf-8"))
    if "error" in report:
        shown = "\n".join(report.get("messages", []))
        pytest.fail(
            f"{report['error']}\n--- shown in Emacs:\n{shown}\n"
            f"--- server stderr (tail):\n{report.get('serverLog', '')}\n"
            f"--- server log (tail):\n{server_log_tail(home)}\n--- emacs:\n{output}",
            pytrace=False,
        )

    assert report["accepted"] is True and report["userMessageSequence"] == 1
    assert report["stopReason"] == "stop" and report["story"] == "".join(STORY)
    assert report["codeActions"] == [
        "Ask Relavium",
        "Explain (Relavium)",
        "Export this chat (Relavium)",
    ]
    assert "It subtracts b from a." in report["explanation"]
    explained = model.requests[-1].json()["messages"][-1]["content"]
    assert "Explain what this code does" in explained and "def add(a, b):" in explained
    # no warning from the server (didChangeConfiguration, unknown requests, …)
    assert report["warnings"] == []

    # the export: nothing in the workspace, a copy in the data directory, the user told where
    assert files_under(workspace) == before
    exports = home / ".relavium" / "exports"
    (copy,) = exports.iterdir()
    assert str(copy) in report["exportMessage"]
    workflow = parse_workflow(copy.read_text(encoding="utf-8"))
    assert workflow.nodes[0].id == "input"
    assert "It subtracts b from a." in copy.read_text(encoding="utf-8")
