"""``relavium-lsp doctor`` lists every MCP server and whether it starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relavium_lsp.cli import main
from tests.unit.mcp.mcp_harness import probe_table, write_user_config


def test_doctor_starts_what_may_start_and_never_an_untrusted_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "project-server-ran"
    workspace = tmp_path / "workspace"
    project = workspace / ".relavium" / "project.toml"
    project.parent.mkdir(parents=True)
    project.write_text(probe_table("local", args=["--marker", str(marker)]), encoding="utf-8")
    write_user_config(
        probe_table()
        + f'[mcp.servers.broken]\ncommand = "{tmp_path / "missing"}"\n'
        + '[mcp.servers.off]\ncommand = "whatever"\nenabled = false\n'
    )
    code = main(["doctor", "--workspace", str(workspace), "--json"])
    found = {item["check"]: item for item in json.loads(capsys.readouterr().out)["checks"]}
    assert code == 1  # the broken server is a problem
    probe = found["MCP server probe"]
    assert probe["status"] == "ok"
    assert probe["summary"].startswith("starts; 13 tools (echo, add, pid, env_names, crash, hang")
    broken = found["MCP server broken"]
    assert broken["status"] == "problem" and "the command was not found" in broken["summary"]
    assert found["MCP server off"]["status"] == "info"
    local = found["MCP server local"]
    assert local["status"] == "info" and "not trusted in this workspace" in local["summary"]
    assert not marker.exists()
