"""The ``[delegation]`` block: defaults, per-field merging, per-agent tables, strict errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from relavium_lsp.config import load_workspace_config
from relavium_lsp.contracts.delegation import (
    DEFAULT_MAX_CONCURRENT_CHILDREN,
    DEFAULT_MAX_DEPTH,
    DelegationLimits,
)
from relavium_lsp.errors import ConfigError


def _write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def test_defaults_are_the_limits_delegation_always_had(tmp_path: Path) -> None:
    config = load_workspace_config(tmp_path / "ws", home=tmp_path / "home")
    assert config.delegation.for_agent("anyone") == DelegationLimits(
        max_depth=DEFAULT_MAX_DEPTH, max_concurrent_children=DEFAULT_MAX_CONCURRENT_CHILDREN
    )
    assert (DEFAULT_MAX_DEPTH, DEFAULT_MAX_CONCURRENT_CHILDREN) == (2, 2)


def test_project_tightens_per_field_and_agent_tables_over_the_block(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    _write(
        home / "config.toml",
        "[delegation]\nmax_depth = 4\nmax_concurrent_children = 3\n"
        "[delegation.agents.lead]\nmax_concurrent_children = 1\nmax_depth = 3\n",
    )
    _write(
        workspace / ".relavium" / "project.toml",
        "[delegation]\nmax_depth = 1\n[delegation.agents.lead]\nmax_depth = 0\n"
        "[delegation.agents.planner]\nmax_concurrent_children = 5\n",
    )
    delegation = load_workspace_config(workspace, home=home).delegation
    assert delegation.for_agent("someone") == DelegationLimits(
        max_depth=1, max_concurrent_children=3
    )
    # lead: depth from the project's table, concurrency from the global one.
    assert delegation.for_agent("lead") == DelegationLimits(max_depth=0, max_concurrent_children=1)
    # planner: the project's 5 children is more than the user's 3 — a project only tightens.
    assert delegation.for_agent("planner") == DelegationLimits(
        max_depth=1, max_concurrent_children=3
    )


@pytest.mark.parametrize(
    ("content", "line", "field"),
    [
        ("[delegation]\nmax_depth = -1\n", 2, "delegation.max_depth"),
        ("[delegation]\nmax_depth = 99\n", 2, "delegation.max_depth"),
        (
            "[chat]\nmax_turns = 3\n\n[delegation]\nmax_concurrent_children = 0\n",
            5,
            "delegation.max_concurrent_children",
        ),
        ("[delegation]\nmax_depth = '2'\n", 2, "delegation.max_depth"),
        ("[delegation]\nmax_dept = 2\n", 2, "delegation.max_dept"),
        ("[delegation.agents.lead]\nmax_depth = 1\nfoo = 2\n", 3, "delegation.agents.lead.foo"),
        ("[delegation.agents.Not_Kebab]\nmax_depth = 1\n", 1, "delegation.agents.Not_Kebab"),
        ("[delegation]\ninput_filter = 'everything'\n", 2, "delegation.input_filter"),
        ("[delegation]\n\ninput_last_n = 0\n", 3, "delegation.input_last_n"),
        (
            "[delegation.agents.a]\nstrip_tool_results = 1\n",
            2,
            "delegation.agents.a.strip_tool_results",
        ),
    ],
)
def test_malformed_values_name_file_line_and_field(
    tmp_path: Path, content: str, line: int, field: str
) -> None:
    workspace = tmp_path / "ws"
    path = _write(workspace / ".relavium" / "project.toml", content)
    with pytest.raises(ConfigError) as raised:
        load_workspace_config(workspace, home=tmp_path / "home")
    assert (raised.value.file, raised.value.line) == (str(path), line)
    assert raised.value.field == field
    assert f"{path}:{line}" in str(raised.value)


def test_a_malformed_global_block_names_the_global_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = _write(home / "config.toml", "[delegation]\nmax_concurrent_children = 1.5\n")
    with pytest.raises(ConfigError) as raised:
        load_workspace_config(None, home=home)
    assert (raised.value.file, raised.value.line) == (str(path), 2)


def test_the_input_filter_defaults_to_the_task_alone_and_merges_per_agent(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    _write(home / "config.toml", '[delegation]\ninput_filter = "last_n"\ninput_last_n = 4\n')
    _write(
        workspace / ".relavium" / "project.toml",
        '[delegation.agents.lead]\ninput_filter = "full_history"\nstrip_tool_results = true\n',
    )
    assert load_workspace_config(None, home=tmp_path / "nobody").delegation.for_agent(
        "x"
    ).input_filter == ("task_only")
    delegation = load_workspace_config(workspace, home=home).delegation
    other = delegation.for_agent("other")
    assert (other.input_filter, other.input_last_n, other.strip_tool_results) == (
        "last_n",
        4,
        False,
    )
    # The project may strip tool results (tighter) but not hand over the full history when
    # the user's own file says last_n (looser).
    lead = delegation.for_agent("lead")
    assert (lead.input_filter, lead.input_last_n, lead.strip_tool_results) == (
        "last_n",
        4,
        True,
    )
