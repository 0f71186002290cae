"""The trust rule holds for every setting (issue 35 item 5): a project file only tightens.

Every field of the project configuration model is enumerated: each must have a rule in
``config/trust.py`` (a new field fails here until someone decides), and for each rule a
project value looser than the user's own is written into real files next to the user's tight
value — the effective configuration must keep the user's. Found by the attack:
``[delegation] max_depth = 16`` in a cloned repository raised the depth from 2 to 16.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import annotated_types
import pytest
from pydantic.fields import FieldInfo

from relavium_lsp.config import load_workspace_config
from relavium_lsp.config.trust import RULES, Rule
from relavium_lsp.config.workspace import WorkspaceConfig
from relavium_lsp.contracts.config import ChatConfig, EffectiveChatPolicy, ProjectConfigFile
from relavium_lsp.contracts.delegation import DelegationLimits, DelegationLimitsConfig
from relavium_lsp.contracts.introspection_config import (
    EffectiveIntrospection,
    IntrospectionConfig,
)
from relavium_lsp.contracts.peers_config import PeerLimits, PeersConfig

# Blocks a project shares with the user's file, with the model a file writes.
BLOCKS: dict[str, type[Any]] = {
    "chat": ChatConfig,
    "delegation": DelegationLimitsConfig,
    "peers": PeersConfig,
    "introspection": IntrospectionConfig,
}
DEFAULTS: dict[str, Any] = {
    "chat": EffectiveChatPolicy(),
    "delegation": DelegationLimits(),
    "peers": PeerLimits(),
    "introspection": EffectiveIntrospection(),
}
# Not merged field by field, each with its own guard (config/trust.py's docstring).
EXEMPT = {"providers", "mcp"}
# Fields a project may set freely: reviewed, nothing to trust in them.
PREFERENCES = {
    ("chat", "default_model"),
    ("chat", "auto_compact"),
    ("chat", "compact_threshold"),
    ("chat", "approval_timeout_s"),
}
# Sample entries for list fields: the user's own, and one a project adds.
LIST_SAMPLES = {
    "allowed_commands": ("make", "rm -rf /"),
    "allowed_command_globs": ("git status *", "*"),
    "allowed_domains": ("api.example.com", "evil.example"),
    "allowed_paths": ("../mine", "/"),
    "protected_paths": ("secrets/*", "project/*"),
}


def _bounds(info: FieldInfo) -> tuple[float, float | None]:
    low: float = 0
    high: float | None = None
    for item in info.metadata:
        if isinstance(item, annotated_types.Ge):
            low = float(item.ge)  # type: ignore[arg-type]
        elif isinstance(item, annotated_types.Gt):
            low = float(item.gt) + 1  # type: ignore[operator]
        elif isinstance(item, annotated_types.Le):
            high = float(item.le)  # type: ignore[arg-type]
    return low, high


def _number(info: FieldInfo, value: float) -> int | float:
    return int(value) if info.annotation in (int, int | None) else value


def tight_and_loose(block: str, name: str, rule: Rule) -> tuple[Any, Any]:
    """A tight value for the user's file and a looser one for the project's."""
    info = BLOCKS[block].model_fields[name]
    if rule.kind == "order":
        return rule.order[0], rule.order[-1]
    if rule.kind == "true_is_looser":
        return False, True
    if rule.kind == "false_is_looser":
        return True, False
    if rule.kind in ("subset", "union", "tier_paths"):
        mine, theirs = LIST_SAMPLES[name]
        return [mine], [mine, theirs]
    low, high = _bounds(info)
    if rule.kind == "lower":
        return _number(info, low + 1), _number(info, high if high is not None else 10**9)
    if rule.kind == "less_often":
        return _number(info, 0), _number(info, low + 1)
    raise AssertionError(f"no sample for {rule.kind}")


def toml_value(value: Any) -> str:
    """A TOML literal for the simple values used here."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def effective(config: WorkspaceConfig, block: str, name: str) -> Any:
    """The merged value the engine obeys."""
    holder = {
        "chat": config.policy,
        "delegation": config.delegation.limits,
        "peers": config.peers,
        "introspection": config.introspection,
    }[block]
    return getattr(holder, name)


def ruled_fields() -> Iterator[tuple[str, str, Rule]]:
    for block, rules in RULES.items():
        for name, rule in rules.items():
            if rule.kind != "preference":
                yield block, name, rule


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_every_field_of_the_project_model_has_a_rule() -> None:
    assert set(ProjectConfigFile.model_fields) == set(BLOCKS) | EXEMPT
    for block, model in BLOCKS.items():
        assert set(model.model_fields) == set(RULES[block]), block
    preferences = {
        (block, name)
        for block, rules in RULES.items()
        for name, rule in rules.items()
        if rule.kind == "preference"
    }
    assert preferences == PREFERENCES


@pytest.mark.parametrize(
    ("block", "name", "rule"), list(ruled_fields()), ids=[f"{b}.{n}" for b, n, _ in ruled_fields()]
)
def test_a_project_cannot_loosen_the_users_value(
    tmp_path: Path, block: str, name: str, rule: Rule
) -> None:
    tight, loose = tight_and_loose(block, name, rule)
    home, workspace = tmp_path / "home", tmp_path / "ws"
    own = f"[{block}]\n{name} = {toml_value(tight)}\n"
    if name == "allowed_paths":  # the user allows the project tier: only then paths count
        own += 'fs_scope = "project"\n'
    write(home / "config.toml", own)
    project = f"[{block}]\n{name} = {toml_value(loose)}\n"
    write(workspace / ".relavium" / "project.toml", project)
    value = effective(load_workspace_config(workspace, home=home), block, name)
    if rule.kind == "union":
        assert set(value) == set(loose)  # both lists count: more protection, never less
    elif rule.kind == "tier_paths":
        assert value == loose  # the project tier is the workspace plus the project's paths
    else:
        assert value == tight


@pytest.mark.parametrize(
    ("block", "name", "rule"), list(ruled_fields()), ids=[f"{b}.{n}" for b, n, _ in ruled_fields()]
)
def test_without_a_user_value_the_default_is_the_ceiling(
    tmp_path: Path, block: str, name: str, rule: Rule
) -> None:
    _, loose = tight_and_loose(block, name, rule)
    default = getattr(DEFAULTS[block], name)
    workspace = tmp_path / "ws"
    write(workspace / ".relavium" / "project.toml", f"[{block}]\n{name} = {toml_value(loose)}\n")
    value = effective(load_workspace_config(workspace, home=tmp_path / "home"), block, name)
    if rule.kind == "union":
        assert set(value) >= set(loose)
    elif rule.kind == "lower" and default is None:
        assert value == loose  # no limit at all is looser than any limit the project sets
    else:
        assert value == default


@pytest.mark.parametrize("name", list(RULES["delegation"]))
def test_a_projects_agent_table_cannot_loosen_either(tmp_path: Path, name: str) -> None:
    tight, loose = tight_and_loose("delegation", name, RULES["delegation"][name])
    home, workspace = tmp_path / "home", tmp_path / "ws"
    write(home / "config.toml", f"[delegation]\n{name} = {toml_value(tight)}\n")
    write(
        workspace / ".relavium" / "project.toml",
        f"[delegation.agents.lead]\n{name} = {toml_value(loose)}\n",
    )
    delegation = load_workspace_config(workspace, home=home).delegation
    assert getattr(delegation.for_agent("lead"), name) == tight


def test_the_reported_depth_stays_at_the_users(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write(workspace / ".relavium" / "project.toml", "[delegation]\nmax_depth = 16\n")
    delegation = load_workspace_config(workspace, home=tmp_path / "home").delegation
    assert delegation.for_agent("any").max_depth == 2
