"""MCP prompts as slash commands: arguments typed after the command, and the prompt's text."""

from __future__ import annotations

import sys

import pytest

from relavium_lsp.config.mcp_servers import ServerDefinition
from relavium_lsp.contracts.mcp import McpServerConfig
from relavium_lsp.errors import ToolError
from relavium_lsp.mcp.connection import ListedPrompt, PromptArgument
from relavium_lsp.mcp.pool import McpServerPool
from relavium_lsp.mcp.prompts import expand_prompt, find_command, prompt_arguments, prompt_commands
from relavium_lsp.mcp.source import McpToolSource
from relavium_lsp.mcp.trust import TrustStore
from tests.unit.mcp.mcp_harness import PROBE_SERVER

ONE = ListedPrompt("review", "", (PromptArgument("topic", required=True),))
TWO = ListedPrompt(
    "diff", "", (PromptArgument("base", required=True), PromptArgument("files", required=False))
)


def test_one_argument_takes_the_whole_input() -> None:
    assert prompt_arguments(ONE, "  the parser module ") == {"topic": "the parser module"}
    assert prompt_arguments(ONE, "topic=x") == {"topic": "x"}
    with pytest.raises(ToolError, match="missing topic"):
        prompt_arguments(ONE, "")


def test_several_arguments_are_name_value_pairs() -> None:
    assert prompt_arguments(TWO, 'base=main files="a.py b.py"') == {
        "base": "main",
        "files": "a.py b.py",
    }
    with pytest.raises(ToolError, match="missing base"):
        prompt_arguments(TWO, "files=a.py")
    with pytest.raises(ToolError, match="unexpected 'color=red'; this prompt takes base=…"):
        prompt_arguments(TWO, "base=main color=red")
    with pytest.raises(ToolError, match="cannot read the arguments"):
        prompt_arguments(TWO, 'base="unclosed')


async def test_running_servers_offer_their_prompts(tmp_path) -> None:
    probe = ServerDefinition(
        name="probe",
        origin="user",
        config=McpServerConfig(command=sys.executable, args=[str(PROBE_SERVER)]),
    )
    source = McpToolSource(McpServerPool(), TrustStore(), load_servers=lambda _: {"probe": probe})
    try:
        assert await prompt_commands(source, "s1", str(tmp_path)) == []  # never started for it
        await source.pool.server(probe, str(tmp_path)).tools()
        [command] = await prompt_commands(source, "s1", str(tmp_path))
        assert command.name == "mcp__probe__review" and command.hint == "topic"
        found = find_command([command], "/mcp__probe__review the cache")
        assert found is not None and found[1] == "the cache"
        assert find_command([command], "/review x") is None
        assert await expand_prompt(command, "the cache") == "Please review the cache carefully."
    finally:
        await source.close()
