"""``WorkspaceConfigs`` parses a configuration again only when a file it is read from changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from relavium_lsp.config import WorkspaceConfigs
from relavium_lsp.errors import ConfigError

AGENT = "id: {id}\nname: Helper\nmodel: {model}\n"


def _agent(workspace: Path, agent_id: str, model: str) -> Path:
    agents = workspace / ".relavium" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    path = agents / f"{agent_id}.agent.yaml"
    path.write_text(AGENT.format(id=agent_id, model=model), encoding="utf-8")
    return path


def test_unchanged_files_give_back_the_parsed_configuration(tmp_path: Path) -> None:
    configs = WorkspaceConfigs()
    home, workspace = tmp_path / "home", tmp_path / "ws"
    _agent(workspace, "helper", "model-a")
    first = configs.load(workspace, home=home)
    assert configs.load(workspace, home=home) is first


def test_an_edit_that_keeps_size_and_timestamp_is_seen(tmp_path: Path) -> None:
    configs = WorkspaceConfigs()
    home, workspace = tmp_path / "home", tmp_path / "ws"
    path = _agent(workspace, "helper", "model-a")
    before = path.stat()
    assert configs.load(workspace, home=home).agents["helper"].model == "model-a"
    _agent(workspace, "helper", "model-b")
    # Two saves within one clock tick keep the timestamp; the bytes still differ.
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert configs.load(workspace, home=home).agents["helper"].model == "model-b"


def test_files_added_and_removed_are_seen(tmp_path: Path) -> None:
    configs = WorkspaceConfigs()
    home, workspace = tmp_path / "home", tmp_path / "ws"
    assert "helper" not in configs.load(workspace, home=home).agents
    path = _agent(workspace, "helper", "model-a")
    assert "helper" in configs.load(workspace, home=home).agents
    (workspace / ".relavium" / "project.toml").write_text(
        '[chat]\ndefault_model = "model-p"\n', encoding="utf-8"
    )
    assert configs.load(workspace, home=home).default_model == "model-p"
    home.mkdir()
    (home / "config.toml").write_text("[chat]\nmax_turns = 3\n", encoding="utf-8")
    assert configs.load(workspace, home=home).policy.max_turns == 3
    path.unlink()
    assert "helper" not in configs.load(workspace, home=home).agents


def test_a_broken_file_is_reported_every_time_until_fixed(tmp_path: Path) -> None:
    configs = WorkspaceConfigs()
    home, workspace = tmp_path / "home", tmp_path / "ws"
    project = workspace / ".relavium" / "project.toml"
    project.parent.mkdir(parents=True)
    project.write_text("[chat\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(ConfigError):
            configs.load(workspace, home=home)
    project.write_text("[chat]\nmax_turns = 4\n", encoding="utf-8")
    assert configs.load(workspace, home=home).policy.max_turns == 4


def test_two_workspaces_and_two_homes_are_kept_apart(tmp_path: Path) -> None:
    configs = WorkspaceConfigs()
    one, two = tmp_path / "one", tmp_path / "two"
    _agent(one, "helper", "model-one")
    _agent(two, "helper", "model-two")
    assert configs.load(one, home=tmp_path / "h").agents["helper"].model == "model-one"
    assert configs.load(two, home=tmp_path / "h").agents["helper"].model == "model-two"
    (tmp_path / "h2").mkdir()
    (tmp_path / "h2" / "config.toml").write_text("[chat]\nmax_turns = 9\n", encoding="utf-8")
    assert configs.load(one, home=tmp_path / "h2").policy.max_turns == 9
    assert configs.load(one, home=tmp_path / "h").policy.max_turns != 9
