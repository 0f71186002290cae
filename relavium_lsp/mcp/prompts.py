"""MCP prompts as slash commands: ``/mcp__SERVER__PROMPT [arguments]``.

A server's prompts are offered as commands only while it runs (listing them never starts a
server, so a prompt appears once a turn has used the server) and only for trusted servers
the session may use. Picking one fetches the prompt (``prompts/get``) and sends its text as
the user's message of an ordinary turn.

Arguments: with a single declared argument the whole input is its value; otherwise the
input is ``name=value`` pairs, shell-quoted (``/mcp__git__review files="a.py b.py"``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from relavium_lsp.contracts.mcp import exposed_name
from relavium_lsp.errors import ToolError
from relavium_lsp.mcp.connection import ListedPrompt
from relavium_lsp.mcp.pool import ManagedServer
from relavium_lsp.mcp.source import McpToolSource

MAX_DESCRIPTION = 300


@dataclass(frozen=True)
class PromptCommand:
    """One prompt of a running server, as a command."""

    name: str
    description: str
    hint: str | None
    server: ManagedServer
    prompt: ListedPrompt


async def prompt_commands(
    source: McpToolSource, session_id: str, working_dir: str | None
) -> list[PromptCommand]:
    """The prompts of the session's running, trusted servers."""
    commands: list[PromptCommand] = []
    for server in (await source.servers(session_id, working_dir)).values():
        managed = source.pool.server(server, working_dir)
        if managed.status().state != "running" or not await source.trust.is_trusted_async(server):
            continue
        try:
            prompts = await managed.prompts()
        except ToolError:
            continue
        for prompt in prompts:
            description = prompt.description or f"Prompt {prompt.name!r}"
            commands.append(
                PromptCommand(
                    name=exposed_name(server.name, prompt.name),
                    description=f"{description[:MAX_DESCRIPTION]} (MCP {server.name})",
                    hint=_hint(prompt),
                    server=managed,
                    prompt=prompt,
                )
            )
    return commands


def _hint(prompt: ListedPrompt) -> str | None:
    if not prompt.arguments:
        return None
    if len(prompt.arguments) == 1:
        return prompt.arguments[0].description or prompt.arguments[0].name
    return " ".join(f"{argument.name}=…" for argument in prompt.arguments)


def prompt_arguments(prompt: ListedPrompt, text: str) -> dict[str, str]:
    """The arguments typed after the command (see the module doc); ``ToolError`` if wrong."""
    declared = {argument.name for argument in prompt.arguments}
    text = text.strip()
    if len(prompt.arguments) == 1 and "=" not in text.split(" ", 1)[0]:
        values = {prompt.arguments[0].name: text} if text else {}
    else:
        try:
            pairs = shlex.split(text)
        except ValueError as error:
            raise ToolError(f"cannot read the arguments: {error}") from None
        values = {}
        for pair in pairs:
            name, equals, value = pair.partition("=")
            if not equals or name not in declared:
                raise ToolError(
                    f"unexpected {pair[:100]!r}; this prompt takes "
                    + (", ".join(f"{n}=…" for n in sorted(declared)) or "no arguments")
                )
            values[name] = value
    missing = [a.name for a in prompt.arguments if a.required and a.name not in values]
    if missing:
        raise ToolError(f"missing {', '.join(missing)}")
    return values


async def expand_prompt(command: PromptCommand, text: str) -> str:
    """The prompt's text for these arguments, ready to send as the user's message."""
    arguments = prompt_arguments(command.prompt, text)
    messages = await command.server.get_prompt(command.prompt.name, arguments)
    return render_messages(messages)


def render_messages(messages: list[tuple[str, Any]]) -> str:
    """Prompt messages as one text: text blocks, embedded text resources, notes for the rest."""
    pieces = [_block_text(block) for _role, block in messages]
    return "\n\n".join(piece for piece in pieces if piece)


def _block_text(block: Any) -> str:
    from mcp_types import EmbeddedResource, ResourceLink, TextContent, TextResourceContents

    if isinstance(block, TextContent):
        return str(block.text)
    if isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
        return f"[resource {block.resource.uri}]\n{block.resource.text}"
    if isinstance(block, ResourceLink):
        return f"[resource link: {block.uri}]"
    kind = getattr(block, "type", "content")
    return f"[{kind} from the prompt left out]"


def find_command(commands: list[PromptCommand], text: str) -> tuple[PromptCommand, str] | None:
    """The command a prompt text runs (``/name rest``) and the rest, if it names one."""
    if not text.startswith("/"):
        return None
    name, _, rest = text[1:].partition(" ")
    by_name: Mapping[str, PromptCommand] = {command.name: command for command in commands}
    command = by_name.get(name)
    return (command, rest) if command is not None else None
