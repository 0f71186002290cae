"""MCP for ACP sessions: the client's ``mcpServers``, and MCP prompts as slash commands.

- :meth:`SessionMcp.bind` gives a session the servers its client passed (see
  :mod:`relavium_lsp.acp.mcp_servers`); :meth:`SessionMcp.release` stops them with the session.
- After each turn :meth:`SessionMcp.refresh` lists the prompts of the session's running
  servers; when they changed, the agent re-sends ``available_commands_update`` with them as
  ``/mcp__SERVER__PROMPT`` commands (:mod:`relavium_lsp.mcp.prompts`).
- :meth:`SessionMcp.expand` turns a picked MCP prompt command into the text of an ordinary
  turn, or says why it cannot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp.schema import AvailableCommand, TextContentBlock

from relavium_lsp.acp.commands import command_entry
from relavium_lsp.acp.mcp_servers import client_servers
from relavium_lsp.acp.prompt_content import PromptBlock
from relavium_lsp.errors import ToolError
from relavium_lsp.mcp.prompts import PromptCommand, expand_prompt, find_command, prompt_commands

if TYPE_CHECKING:
    from relavium_lsp.engine.api import Engine


@dataclass(frozen=True)
class Expanded:
    """A picked MCP prompt: the text to send, or why it could not be fetched."""

    text: str | None = None
    problem: str | None = None


class SessionMcp:
    """Per-connection MCP bookkeeping of the ACP agent."""

    def __init__(self) -> None:
        self._commands: dict[str, list[PromptCommand]] = {}

    def bind(
        self,
        engine: Engine,
        session_id: str,
        offered: Sequence[Any] | None,
        working_dir: str,
    ) -> None:
        """The client's MCP servers become this session's (replacing any from before)."""
        if engine.mcp is not None:
            engine.mcp.bind_session(session_id, client_servers(offered), working_dir)

    async def release(self, engine: Engine, session_id: str) -> None:
        """The session closed: forget its commands, stop its client servers."""
        self._commands.pop(session_id, None)
        if engine.mcp is not None:
            await engine.mcp.release_session(session_id)

    def commands(self, session_id: str) -> list[AvailableCommand]:
        """The MCP prompt commands the session offers now."""
        return [
            command_entry(command.name, command.description, command.hint)
            for command in self._commands.get(session_id, [])
        ]

    async def refresh(self, engine: Engine, session_id: str) -> bool:
        """Re-list the prompts of the session's running servers; ``True`` when they changed."""
        if engine.mcp is None:
            return False
        record = await engine.record(session_id)
        fresh = await prompt_commands(engine.mcp, session_id, record.context.working_dir)
        before = [(c.name, c.description) for c in self._commands.get(session_id, [])]
        self._commands[session_id] = fresh
        return before != [(c.name, c.description) for c in fresh]

    async def expand(self, session_id: str, prompt: list[PromptBlock]) -> Expanded | None:
        """The turn text of a picked MCP prompt command; ``None`` when the prompt is not one."""
        if len(prompt) != 1 or not isinstance(prompt[0], TextContentBlock):
            return None
        found = find_command(self._commands.get(session_id, []), prompt[0].text.strip())
        if found is None:
            return None
        command, rest = found
        try:
            return Expanded(text=await expand_prompt(command, rest))
        except ToolError as error:
            return Expanded(problem=f"/{command.name} failed: {error.message}")
