"""The ``*.agent.yaml`` contract (``docs/design.md`` §8) and the built-in default agent."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from relavium_lsp.contracts.base import AuthoredModel
from relavium_lsp.contracts.mcp import SERVER_NAME_MAX, SERVER_NAME_PATTERN

KEBAB_ID_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
MCP_SELECTOR_PREFIX = "mcp:"
# ``mcp:NAME`` (every tool of a server) or ``mcp:NAME/TOOL`` (one tool, as the server names it).
_MCP_SELECTOR = re.compile(
    r"^mcp:(?P<server>" + SERVER_NAME_PATTERN.strip("^$") + r")(?:/(?P<tool>[^\s/]{1,128}))?$"
)


def parse_mcp_selector(entry: str) -> tuple[str, str | None] | None:
    """``(server, tool or None)`` for an ``mcp:`` tools entry; ``None`` for anything else."""
    match = _MCP_SELECTOR.match(entry)
    if match is None or len(match.group("server")) > SERVER_NAME_MAX:
        return None
    return match.group("server"), match.group("tool")


def _check_tool_entry(entry: str) -> str:
    if entry.startswith(MCP_SELECTOR_PREFIX) and parse_mcp_selector(entry) is None:
        raise ValueError(
            f"{entry[:200]!r} is not an MCP selector: write mcp:SERVER for every tool of a "
            "server or mcp:SERVER/TOOL for one"
        )
    return entry


# Every built-in tool's name (``tools.registry.default_registry``; a unit test keeps the two
# equal). An agent file naming anything else is a config error (issue 16: ``serach_files``
# used to start silently without the tool). Stored agent snapshots are not re-checked.
BUILTIN_TOOL_NAMES = frozenset(
    {
        "read_file",
        "write_file",
        "edit_file",
        "list_directory",
        "search_files",
        "find_files",
        "run_command",
        "terminal_start",
        "terminal_output",
        "terminal_kill",
        "git_status",
        "git_commit",
        "http_request",
        "update_plan",
        "editor_diagnostics",
        "editor_symbols",
        "editor_references",
        "editor_definition",
        "read_tool_output",
        "delegate",
        "message_session",
    }
)

# A built-in tool name, or an MCP selector (``mcp:SERVER`` / ``mcp:SERVER/TOOL``).
ToolEntry = Annotated[str, AfterValidator(_check_tool_entry)]


class FallbackEntry(AuthoredModel):
    """One step of an agent's fallback chain."""

    model: str = Field(min_length=1)
    provider: str | None = None
    max_attempts: int = Field(default=1, ge=1, le=10)


class AgentDefinition(AuthoredModel):
    """An agent as authored in ``.relavium/agents/<id>.agent.yaml``."""

    id: str = Field(pattern=KEBAB_ID_PATTERN, max_length=64)
    name: str = Field(min_length=1, max_length=200)
    description: str = ""
    model: str | None = None
    provider: str | None = None
    system_prompt: str = ""
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    tools: list[ToolEntry] = Field(default_factory=list)
    fallback_chain: list[FallbackEntry] = Field(default_factory=list)


OFFLINE_PROVIDER_ID = "offline"
OFFLINE_MODEL_ID = "relavium-offline-demo"

DEFAULT_AGENT = AgentDefinition(
    id="relavium-default",
    name="Relavium",
    description="A general coding assistant for the open workspace.",
    model=None,
    provider=None,
    system_prompt=(
        "You are Relavium, a careful coding assistant working inside the user's editor.\n"
        "Workspace: {{ctx.workingDir}}. Active file: {{ctx.activeFile}}. "
        "Selection: {{ctx.selection}}. Git ref: {{ctx.gitRef}}.\n"
        "Use tools to read files before you change them: find code with search_files and "
        "find_files. Change existing files with edit_file (exact text copied from the file → "
        "its replacement); use write_file only to create a file. For a task of several steps, "
        "keep a short plan with update_plan and tick its steps off as you go. Keep answers "
        "short and concrete."
    ),
    tools=[
        "read_file",
        "edit_file",
        "write_file",
        "list_directory",
        "search_files",
        "find_files",
        "update_plan",
        "git_status",
        "editor_diagnostics",
        "editor_symbols",
        "editor_references",
        "editor_definition",
    ],
)
