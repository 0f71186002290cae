"""Which prompts are slash commands (the rest reach the model unchanged)."""

from __future__ import annotations

from acp.schema import ResourceContentBlock, TextContentBlock

from relavium_lsp.acp.commands import COMMANDS, SlashCommand, commands_update, parse_command


def text(value: str) -> list[TextContentBlock]:
    return [TextContentBlock(type="text", text=value)]


def test_a_known_name_with_its_input_is_a_command() -> None:
    assert parse_command(text("/usage")) == SlashCommand("usage", "")
    assert parse_command(text("  /title   Fix the   parser  ")) == SlashCommand(
        "title", "Fix the   parser"
    )
    assert parse_command(text("/model loop/gpt-4.1")) == SlashCommand("model", "loop/gpt-4.1")


def test_paths_unknown_names_and_mixed_prompts_are_ordinary_prompts() -> None:
    assert parse_command(text("/usr/bin/python crashes, why?")) is None
    assert parse_command(text("/help")) is None
    assert parse_command(text("please /usage")) is None
    link = ResourceContentBlock(type="resource_link", uri="file:///a.py", name="a.py")
    assert parse_command([*text("/usage"), link]) is None


def test_every_command_is_announced_with_a_description() -> None:
    update = commands_update()
    assert [command.name for command in update.available_commands] == [
        command.name for command in COMMANDS
    ]
    assert all(command.description for command in update.available_commands)
    dumped = update.model_dump(mode="json", by_alias=True, exclude_none=True)
    title = next(c for c in dumped["availableCommands"] if c["name"] == "title")
    assert title["input"] == {"hint": "the new title"}
