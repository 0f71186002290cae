"""``[mcp.servers.*]`` and ``mcp:`` agent entries: what is accepted, and errors with a line."""

from __future__ import annotations

from pathlib import Path

import pytest

from relavium_lsp.config import load_agent_file, load_workspace_config
from relavium_lsp.contracts.mcp import exposed_name, split_exposed_name
from relavium_lsp.errors import ConfigError
from tests.unit.mcp.mcp_harness import write_user_config


def _project(workspace: Path, text: str) -> Path:
    path = workspace / ".relavium" / "project.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_servers_from_both_files_with_their_origin(tmp_path: Path) -> None:
    write_user_config(
        '[mcp.servers.time]\ncommand = "mcp-server-time"\nauto_approve_read_only = true\n'
    )
    _project(
        tmp_path,
        '[mcp.servers.tracker]\nurl = "https://mcp.example.com/mcp"\n'
        '[mcp.servers.local]\ncommand = "./tools/server"\ncwd = "tools"\n'
        "auto_approve_read_only = true\n",
    )
    servers = load_workspace_config(tmp_path).mcp_servers
    assert sorted(servers) == ["local", "time", "tracker"]
    assert servers["time"].origin == "user" and not servers["time"].needs_trust
    assert servers["time"].config.auto_approve_read_only
    local = servers["local"]
    assert local.origin == "project" and local.needs_trust
    assert local.workspace == str(tmp_path.resolve())
    assert local.resolved_cwd("/elsewhere") == str(tmp_path.resolve() / "tools")
    assert not local.config.auto_approve_read_only  # a project cannot switch approvals off
    assert servers["tracker"].transport == "http"
    assert servers["tracker"].host() == "mcp.example.com"


def test_a_changed_definition_has_another_fingerprint(tmp_path: Path) -> None:
    _project(tmp_path, '[mcp.servers.local]\ncommand = "server"\n')
    before = load_workspace_config(tmp_path).mcp_servers["local"].fingerprint()
    _project(tmp_path, '[mcp.servers.local]\ncommand = "server"\nargs = ["--all"]\n')
    after = load_workspace_config(tmp_path).mcp_servers["local"].fingerprint()
    assert before != after
    _project(tmp_path, '[mcp.servers.local]\ncommand = "server"\nargs = ["--all"]\n')
    assert load_workspace_config(tmp_path).mcp_servers["local"].fingerprint() == after


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('[mcp.servers.x]\nargs = ["a"]\n', 1, "set either command"),
        ('[mcp.servers.x]\ncommand = "a"\nurl = "https://h/mcp"\n', 1, "set either command"),
        ('[mcp.servers.x]\nurl = "https://h/mcp"\nargs = ["a"]\n', 1, "apply to stdio servers"),
        ('[mcp.servers."Bad Name"]\ncommand = "a"\n', None, "server name 'Bad Name'"),
        ('[mcp.servers.a__b]\ncommand = "a"\n', None, "server name 'a__b'"),
        ('[mcp.servers.x]\ncommand = "a"\ntimeout_s = 0\n', 3, "greater than 0"),
        ('[mcp.servers.x]\ncommand = "a"\nshell = true\n', 3, "unknown key"),
        (
            '[mcp.servers.x]\ncommand = "a"\nenv = { "1BAD" = "v" }\n',
            3,
            "environment variable name '1BAD'",
        ),
    ],
)
def test_invalid_servers_name_the_file_and_line(
    tmp_path: Path, text: str, line: int | None, message: str
) -> None:
    path = _project(tmp_path, text)
    with pytest.raises(ConfigError) as error:
        load_workspace_config(tmp_path)
    assert error.value.file == str(path)
    if line is not None:
        assert error.value.line == line
    assert message in error.value.message


def test_agents_select_servers_and_tools(tmp_path: Path) -> None:
    path = tmp_path / "a.agent.yaml"
    path.write_text(
        "id: a\nname: A\ntools: [read_file, mcp:time, mcp:git/git_status]\n", encoding="utf-8"
    )
    assert load_agent_file(path).tools == ["read_file", "mcp:time", "mcp:git/git_status"]


@pytest.mark.parametrize("entry", ["mcp:", "mcp:Time", "mcp:a__b", "mcp:time/", "mcp:x/a b"])
def test_malformed_mcp_entries_are_config_errors(tmp_path: Path, entry: str) -> None:
    path = tmp_path / "a.agent.yaml"
    path.write_text(f"id: a\nname: A\ntools:\n  - read_file\n  - '{entry}'\n", encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load_agent_file(path)
    assert error.value.line == 5 and "is not an MCP selector" in error.value.message


def test_namespaced_names_fit_every_provider() -> None:
    assert exposed_name("git", "git_status") == "mcp__git__git_status"
    assert split_exposed_name("mcp__git__git_status") == ("git", "git_status")
    odd = exposed_name("git", "status.v2")
    assert odd.startswith("mcp__git__status_v2_") and len(odd) == len("mcp__git__status_v2_") + 6
    long = exposed_name("server", "t" * 100)
    assert len(long) == 64
    assert exposed_name("server", "t" * 100) != exposed_name("server", "t" * 99)
    assert split_exposed_name("read_file") is None
