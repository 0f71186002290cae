"""Loading ``*.agent.yaml`` files strictly, with errors that point at a line.

ruamel.yaml's round-trip loader keeps each key's position, rejects duplicate keys and never
constructs arbitrary Python objects. The loaded tree is copied into plain ``dict``/``list``/
scalars (recording ``{key path: line}`` on the way) and validated with pydantic in *strict*
mode, so ``temperature: "0.5"`` or ``id: 123`` is a type error instead of a silent coercion.

Aliases are shared nodes in YAML; the copy expands them, so a node budget stops "billion
laughs" style files. (ruamel resolves a recursive alias to ``null``, which then fails
validation at its line.)

A file whose name does not match its ``id`` (``<id>.agent.yaml``) is loaded with a warning:
the ``id`` inside the file is what sessions refer to. Two files declaring the same ``id`` are
an error naming both files.
"""

from __future__ import annotations

import datetime
import difflib
import logging
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from relavium_lsp.config.locate import (
    KeyPath,
    config_error_from_validation,
    read_config_text,
)
from relavium_lsp.contracts.agent import (
    BUILTIN_TOOL_NAMES,
    MCP_SELECTOR_PREFIX,
    AgentDefinition,
)
from relavium_lsp.errors import ConfigError

logger = logging.getLogger(__name__)

AGENT_SUFFIX = ".agent.yaml"
MAX_YAML_NODES = 10_000
_DUPLICATE = re.compile(r'found duplicate key "(?P<key>[^"]*)"')


def load_agent_file(path: Path) -> AgentDefinition:
    """Parse and validate one agent file; any problem is a :class:`ConfigError` with a line."""
    text = read_config_text(path)
    tree = _parse_yaml(text, path)
    if tree is None:
        raise ConfigError("the agent file is empty", file=str(path), line=1)
    if not isinstance(tree, CommentedMap):
        raise ConfigError("an agent file must be a mapping of keys", file=str(path), line=1)
    lines: dict[KeyPath, int] = {(): 1}
    plain = _Copier(path, lines).copy(tree, ())
    try:
        agent = AgentDefinition.model_validate(plain, strict=True)
    except ValidationError as error:
        raise config_error_from_validation(error, path, lines) from None
    _check_tool_names(agent, path, lines)
    expected = path.name.removesuffix(AGENT_SUFFIX)
    if agent.id != expected:
        logger.warning(
            "%s:%s: agent id %r differs from the file name (expected %r); using the id",
            path,
            lines.get(("id",), 1),
            agent.id,
            expected,
        )
    return agent


def _check_tool_names(agent: AgentDefinition, path: Path, lines: dict[KeyPath, int]) -> None:
    """An unknown built-in tool name is a typo, not a tool to leave out silently."""
    for index, entry in enumerate(agent.tools):
        if entry.startswith(MCP_SELECTOR_PREFIX) or entry in BUILTIN_TOOL_NAMES:
            continue
        close = difflib.get_close_matches(entry, sorted(BUILTIN_TOOL_NAMES), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"unknown tool {entry[:200]!r}{hint} (built-in tools: "
            f"{', '.join(sorted(BUILTIN_TOOL_NAMES))}; MCP tools are written mcp:SERVER/TOOL)",
            file=str(path),
            line=lines.get(("tools", index), lines.get(("tools",), 1)),
            field="tools",
        )


def load_agents(files: Iterable[Path]) -> dict[str, tuple[AgentDefinition, Path]]:
    """Load several agent files, keyed by id; a repeated id names both files."""
    agents: dict[str, tuple[AgentDefinition, Path]] = {}
    for path in files:
        agent = load_agent_file(path)
        if agent.id in agents:
            first = agents[agent.id][1]
            raise ConfigError(
                f"agent id {agent.id!r} is also defined in {first}", file=str(path), field="id"
            )
        agents[agent.id] = (agent, path)
    return agents


def agent_files(agents_dir: Path) -> list[Path]:
    """The ``*.agent.yaml`` files of a directory, sorted by name (empty if it is missing)."""
    if not agents_dir.is_dir():
        return []
    return sorted(path for path in agents_dir.glob(f"*{AGENT_SUFFIX}") if path.is_file())


def _parse_yaml(text: str, path: Path) -> Any:
    yaml = YAML(typ="rt", pure=True)
    try:
        return yaml.load(text)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        # A parser that hit the end of the stream marks the line after the last one.
        last_line = max(1, len(text.splitlines()))
        line = min(mark.line + 1, last_line) if mark is not None else None
        problem = str(error.problem or error.context or "invalid YAML")
        duplicate = _DUPLICATE.search(problem)
        if duplicate is not None:
            key = duplicate.group("key")
            raise ConfigError("duplicate key", file=str(path), line=line, field=key) from None
        raise ConfigError(f"invalid YAML: {problem}", file=str(path), line=line) from None
    except YAMLError as error:
        raise ConfigError(f"invalid YAML: {type(error).__name__}", file=str(path)) from None


class _Copier:
    """Copies a ruamel tree into plain Python values, recording each key's line."""

    def __init__(self, path: Path, lines: dict[KeyPath, int]) -> None:
        self._path = path
        self._lines = lines
        self._budget = MAX_YAML_NODES

    def copy(self, node: Any, at: KeyPath) -> Any:
        self._budget -= 1
        if self._budget < 0:
            raise ConfigError(
                f"the file expands to more than {MAX_YAML_NODES} values (aliases?)",
                file=str(self._path),
            )
        if isinstance(node, CommentedMap):
            return self._copy_map(node, at)
        if isinstance(node, CommentedSeq):
            return self._copy_seq(node, at)
        return _plain_scalar(node)

    def _copy_map(self, node: CommentedMap, at: KeyPath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in node.items():
            line = node.lc.key(key)[0] + 1
            if not isinstance(key, str):
                raise ConfigError(
                    "keys must be text", file=str(self._path), line=line, field=str(key)
                )
            self._lines[(*at, key)] = line
            result[str(key)] = self.copy(value, (*at, key))
        return result

    def _copy_seq(self, node: CommentedSeq, at: KeyPath) -> list[Any]:
        result: list[Any] = []
        for index, value in enumerate(node):
            self._lines[(*at, index)] = node.lc.item(index)[0] + 1
            result.append(self.copy(value, (*at, index)))
        return result


def _plain_scalar(value: Any) -> Any:
    """Turn ruamel's scalar subclasses into builtins (bool first: YAML booleans subclass int)."""
    if value is None or isinstance(value, datetime.date):
        return value
    if isinstance(value, bool) or type(value).__name__ == "ScalarBoolean":
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value
