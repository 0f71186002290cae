from __future__ import annotations

import logging
from pathlib import Path

import pytest

from relavium_lsp.config import load_agent_file, load_workspace_config
from relavium_lsp.contracts.agent import DEFAULT_AGENT
from relavium_lsp.errors import ConfigError

GOOD = """\
id: reviewer
name: Code reviewer
description: Reviews diffs.
model: gpt-4o
provider: openai
system_prompt: |
  You review code in {{ctx.workingDir}}.
temperature: 0.2
max_tokens: 4096
tools: [read_file, search_files]
fallback_chain:
  - model: claude-sonnet
    provider: anthropic
    max_attempts: 2
  - model: local-llama
"""


def _write(directory: Path, name: str, content: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(content, encoding="utf-8")
    return path


def _error(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as raised:
        load_agent_file(path)
    return raised.value


def test_a_valid_agent_file_loads(tmp_path: Path) -> None:
    agent = load_agent_file(_write(tmp_path, "reviewer.agent.yaml", GOOD))
    assert agent.id == "reviewer"
    assert agent.temperature == 0.2
    assert isinstance(agent.temperature, float)
    assert agent.system_prompt == "You review code in {{ctx.workingDir}}.\n"
    assert [entry.model for entry in agent.fallback_chain] == ["claude-sonnet", "local-llama"]
    assert agent.fallback_chain[0].max_attempts == 2
    assert type(agent.name) is str


@pytest.mark.parametrize(
    ("content", "line", "field", "words"),
    [
        # a typo'd top-level key
        (GOOD.replace("temperature:", "temprature:"), 8, "temprature", "unknown key"),
        # a typo'd key deep inside the fallback chain
        (
            GOOD.replace("    max_attempts: 2", "    max_atempts: 2"),
            14,
            "fallback_chain[0].max_atempts",
            "unknown key",
        ),
        # wrong types: text where a number belongs, a number where text belongs
        (GOOD.replace("temperature: 0.2", "temperature: '0.2'"), 8, "temperature", "number"),
        (GOOD.replace("max_tokens: 4096", "max_tokens: many"), 9, "max_tokens", "integer"),
        (GOOD.replace("model: gpt-4o", "model: 4"), 4, "model", "string"),
        (GOOD.replace("tools: [read_file, search_files]", "tools: read_file"), 10, "tools", "list"),
        (
            GOOD.replace("  - model: local-llama", "  - model: 2024-01-01"),
            15,
            "fallback_chain[1].model",
            "string",
        ),
        # out of range
        (
            GOOD.replace("temperature: 0.2", "temperature: 7"),
            8,
            "temperature",
            "less than or equal",
        ),
        # a bad id
        (GOOD.replace("id: reviewer", "id: Code_Reviewer"), 1, "id", "kebab-case"),
        (GOOD.replace("id: reviewer", "id: reviewer-"), 1, "id", "kebab-case"),
        # duplicate keys are never silently merged
        (GOOD + "temperature: 0.9\n", 16, "temperature", "duplicate"),
        # a missing required key points at the top of the file
        (GOOD.replace("name: Code reviewer\n", ""), 1, "name", "missing"),
    ],
)
def test_typos_name_file_line_and_field(
    tmp_path: Path, content: str, line: int, field: str, words: str
) -> None:
    path = _write(tmp_path, "reviewer.agent.yaml", content)
    error = _error(path)
    assert error.file == str(path)
    assert error.line == line
    assert error.field == field
    assert words in str(error).lower()
    assert f"{path}:{line}" in str(error)


def test_several_problems_report_the_first_and_count_the_rest(tmp_path: Path) -> None:
    content = GOOD.replace("temperature: 0.2", "temperature: hot").replace("tools:", "toolz:")
    error = _error(_write(tmp_path, "reviewer.agent.yaml", content))
    assert error.line == 8 and error.field == "temperature"
    assert "1 more problem" in str(error)


@pytest.mark.parametrize(
    ("content", "line", "words"),
    [
        ("id: a\nname: [unclosed\n", 2, "invalid yaml"),
        ("id: a\n  name: bad indent\n", 2, "invalid yaml"),
        ("", 1, "empty"),
        ("# only a comment\n", 1, "empty"),
        ("- a\n- b\n", 1, "mapping"),
        ("just text\n", 1, "mapping"),
        ("id: a\n---\nid: b\n", 2, "invalid yaml"),
        ("1: a\nname: x\n", 1, "text"),
    ],
)
def test_malformed_yaml(tmp_path: Path, content: str, line: int, words: str) -> None:
    error = _error(_write(tmp_path, "a.agent.yaml", content))
    assert error.line == line
    assert words in str(error).lower()


def test_alias_bombs_and_recursive_aliases_are_refused(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    previous = "a"
    for level in "bcdefgh":
        bomb += f"{level}: &{level} [" + ", ".join([f"*{previous}"] * 10) + "]\n"
        previous = level
    bomb += "id: boom\nname: Boom\ntools: *h\n"
    error = _error(_write(tmp_path, "boom.agent.yaml", bomb))
    assert "more than" in str(error)
    recursive = "id: loop\nname: Loop\ntools: &t [a, *t]\n"
    error = _error(_write(tmp_path, "loop.agent.yaml", recursive))
    assert (error.line, error.field) == (3, "tools[1]")


def test_not_utf8_and_oversized_files(tmp_path: Path) -> None:
    path = tmp_path / "bin.agent.yaml"
    path.write_bytes(b"id: a\nname: \xff\xfe\n")
    error = _error(path)
    assert error.line == 2 and "utf-8" in str(error).lower()
    big = _write(tmp_path, "big.agent.yaml", "id: big\nname: x\ndescription: " + "x" * 1_000_001)
    assert "larger than" in str(_error(big))


def test_file_name_that_differs_from_the_id_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    agent = load_agent_file(_write(tmp_path, "other-name.agent.yaml", GOOD))
    assert agent.id == "reviewer"
    warnings = [record.getMessage() for record in caplog.records]
    assert any("other-name.agent.yaml:1" in text and "'reviewer'" in text for text in warnings)


def test_duplicate_ids_across_files_name_both_files(tmp_path: Path) -> None:
    agents = tmp_path / ".relavium" / "agents"
    first = _write(agents, "reviewer.agent.yaml", GOOD)
    second = _write(agents, "reviewer-copy.agent.yaml", GOOD)
    with pytest.raises(ConfigError) as raised:
        load_workspace_config(tmp_path, home=tmp_path / "home")
    message = str(raised.value)
    assert str(first) in message and str(second) in message
    assert raised.value.field == "id"


def test_workspace_agents_and_the_default(tmp_path: Path) -> None:
    agents = tmp_path / ".relavium" / "agents"
    _write(agents, "reviewer.agent.yaml", GOOD)
    _write(agents, "notes.txt", "ignored")
    _write(agents, "draft.agent.yaml.bak", "ignored: [")
    config = load_workspace_config(tmp_path, home=tmp_path / "home")
    assert list(config.agents) == [DEFAULT_AGENT.id, "reviewer"]
    assert config.agents[DEFAULT_AGENT.id] is DEFAULT_AGENT
    assert agents / "reviewer.agent.yaml" in config.sources


def test_a_workspace_may_replace_the_default_agent(tmp_path: Path) -> None:
    custom = GOOD.replace("id: reviewer", f"id: {DEFAULT_AGENT.id}")
    _write(tmp_path / ".relavium" / "agents", f"{DEFAULT_AGENT.id}.agent.yaml", custom)
    config = load_workspace_config(tmp_path, home=tmp_path / "home")
    assert list(config.agents) == [DEFAULT_AGENT.id]
    assert config.agents[DEFAULT_AGENT.id].name == "Code reviewer"
