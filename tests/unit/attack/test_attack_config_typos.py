"""Attack: config typos (issue 16 item 9) — an unknown tool name is an error with file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from relavium_lsp.config import load_agent_file
from relavium_lsp.contracts.agent import BUILTIN_TOOL_NAMES, AgentDefinition
from relavium_lsp.errors import ConfigError
from relavium_lsp.tools.registry import default_registry

AGENT = "id: helper\nname: Helper\ntools:\n  - read_file\n  - {tool}\n"


def _agent_file(tmp_path: Path, tool: str) -> Path:
    path = tmp_path / "helper.agent.yaml"
    path.write_text(AGENT.format(tool=tool), encoding="utf-8")
    return path


def test_an_unknown_tool_name_names_file_line_and_the_likely_tool(tmp_path: Path) -> None:
    path = _agent_file(tmp_path, "serach_files")
    with pytest.raises(ConfigError) as raised:
        load_agent_file(path)
    error = raised.value
    assert (error.file, error.line, error.field) == (str(path), 5, "tools")
    assert "unknown tool 'serach_files'" in str(error)
    assert "did you mean 'search_files'" in str(error)
    assert str(error).startswith(f"{path}:5:")


@pytest.mark.parametrize("tool", ["search_files", "mcp:probe", "mcp:probe/echo"])
def test_known_tools_and_mcp_selectors_load(tmp_path: Path, tool: str) -> None:
    assert load_agent_file(_agent_file(tmp_path, tool)).tools == ["read_file", tool]


def test_the_name_list_is_the_registry(tmp_path: Path) -> None:
    names = set(default_registry().names)
    assert names == BUILTIN_TOOL_NAMES


def test_a_stored_agent_snapshot_with_an_old_tool_name_still_loads() -> None:
    # Sessions keep their agent's snapshot; a tool that no longer exists must not lock them.
    snapshot = {"id": "old", "name": "Old", "tools": ["a_retired_tool"]}
    assert AgentDefinition.model_validate(snapshot).tools == ["a_retired_tool"]
