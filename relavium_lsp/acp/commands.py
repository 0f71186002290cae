"""Slash commands: what ``available_commands_update`` offers, and running them.

An ACP client shows the agent's commands in its prompt box and sends a picked one as an
ordinary prompt, ``/<name> <input>``. A prompt whose text starts with one of these names runs
the command instead of a model turn: it is answered with an agent message and ``end_turn``,
and adds nothing to the transcript. Any other text starting with ``/`` (a path, say) is an
ordinary prompt. A command that cannot be done (an unknown model, a turn still running)
says why in its answer rather than failing the request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    TextContentBlock,
    UnstructuredCommandInput,
)

from relavium_lsp.acp.prompt_content import PromptBlock
from relavium_lsp.acp.session_config import model_menu
from relavium_lsp.contracts.events import SessionCompacted
from relavium_lsp.contracts.replay import ToolReplayMode
from relavium_lsp.contracts.rewind import RewindResult
from relavium_lsp.engine.api import Engine, first_choice
from relavium_lsp.errors import RelaviumError
from relavium_lsp.tools.host import FilesystemHost

MICROCENTS_PER_DOLLAR = 100_000_000
MAX_TITLE_CHARS = 500


def command_entry(name: str, description: str, hint: str | None = None) -> AvailableCommand:
    """One entry of ``available_commands_update`` (``hint`` describes its free-text input)."""
    shown = AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None
    return AvailableCommand(name=name, description=description, input=shown)


_command = command_entry
COMMANDS = (
    _command(
        "compact",
        "Summarise older messages to free context ('trim' hides them from the model instead)",
        "summarize | trim",
    ),
    _command("title", "Rename this chat", "the new title"),
    _command("usage", "Tokens and cost of this chat so far"),
    _command("model", "List the models this chat can use, or switch to one", "provider/model"),
    _command(
        "rewind",
        "List file checkpoints, or put the files the agent changed back to before a message",
        "message number | undo <rewind id>",
    ),
    _command(
        "memory",
        "Show this workspace's long-term memory, or the changes checkpoints propose for it",
        "proposals | accept <id> | reject <id>",
    ),
    _command(
        "replay",
        "Replay this chat against its recordings into a new session, and compare",
        "auto | live | recorded | mixed <tool>…",
    ),
)
_NAMES = frozenset(command.name for command in COMMANDS)


def commands_update(extra: Sequence[AvailableCommand] = ()) -> AvailableCommandsUpdate:
    """The ``available_commands_update`` listing every command (``extra``: MCP prompts)."""
    return AvailableCommandsUpdate(
        session_update="available_commands_update", available_commands=[*COMMANDS, *extra]
    )


@dataclass(frozen=True)
class SlashCommand:
    """A command picked in the client: its name and whatever was typed after it."""

    name: str
    argument: str


def parse_command(prompt: list[PromptBlock]) -> SlashCommand | None:
    """The command a prompt runs, if it is a single text block naming one of ours."""
    if len(prompt) != 1 or not isinstance(prompt[0], TextContentBlock):
        return None
    text = prompt[0].text.strip()
    if not text.startswith("/"):
        return None
    name, _, argument = text[1:].partition(" ")
    if name not in _NAMES:
        return None
    return SlashCommand(name=name, argument=argument.strip())


@dataclass(frozen=True)
class CommandHooks:
    """What a command tells the rest of the connection about."""

    # The session's title changed.
    title_changed: Callable[[str, str], None]
    # The session's model changed (its settings must be re-announced).
    model_changed: Callable[[str], Awaitable[None]]


async def run_command(
    engine: Engine, session_id: str, command: SlashCommand, hooks: CommandHooks
) -> str:
    """Run ``command`` in a session; the text the client is answered with."""
    try:
        if command.name == "compact":
            return await _compact(engine, session_id, command.argument)
        if command.name == "title":
            return await _title(engine, session_id, command.argument, hooks)
        if command.name == "usage":
            return await _usage(engine, session_id)
        if command.name == "rewind":
            return await _rewind(engine, session_id, command.argument)
        if command.name == "memory":
            return await _memory(engine, session_id, command.argument)
        if command.name == "replay":
            return await _replay(engine, session_id, command.argument)
        return await _model(engine, session_id, command.argument, hooks)
    except RelaviumError as error:
        return f"/{command.name} failed: {error.message}"


async def _compact(engine: Engine, session_id: str, argument: str) -> str:
    mode = argument or "summarize"
    if mode not in ("summarize", "trim"):
        return f"/compact takes 'summarize' or 'trim', not {mode[:50]!r}."
    event = await engine.compact(session_id, mode="trim" if mode == "trim" else "summarize")
    verb = "Summarised" if isinstance(event, SessionCompacted) else "Trimmed"
    return (
        f"{verb} the history the model sees: {event.messages_before} → "
        f"{event.messages_after} messages, about {event.tokens_before} → "
        f"{event.tokens_after} tokens."
    )


async def _title(engine: Engine, session_id: str, argument: str, hooks: CommandHooks) -> str:
    title = " ".join(argument.split())[:MAX_TITLE_CHARS]
    if not title:
        return "Usage: /title <the new title>"
    await engine.rename(session_id, title)
    hooks.title_changed(session_id, title)
    return f"Renamed this chat to “{title}”."


async def _usage(engine: Engine, session_id: str) -> str:
    record = await engine.record(session_id)
    totals = record.totals
    dollars = totals.cost_microcents / MICROCENTS_PER_DOLLAR
    return (
        f"{record.turn_count} turn(s): {totals.input_tokens} input and "
        f"{totals.output_tokens} output tokens, ${dollars:.4f} on {record.model_id}."
    )


async def _memory(engine: Engine, session_id: str, argument: str) -> str:
    record = await engine.record(session_id)
    working_dir = record.context.working_dir
    words = argument.split()
    if words and words[0] == "proposals":
        return await _proposals(engine, working_dir)
    if len(words) == 2 and words[0] in ("accept", "reject"):
        decided = await engine.memory.decide(
            words[1], "accept" if words[0] == "accept" else "reject"
        )
        if decided.memory is None:
            return f"Proposal {words[1]} {decided.proposal.status}; the memory is unchanged."
        return f"Proposal {words[1]} accepted: the memory is at revision {decided.memory.revision}."
    if words:
        return "Usage: /memory, /memory proposals, /memory accept <id>, /memory reject <id>"
    memory = await engine.memory.read(working_dir)
    pending = len(await engine.memory.proposals(working_dir))
    waiting = f"\n\n{pending} proposed change(s) wait: /memory proposals" if pending else ""
    if not memory.text.strip():
        return (
            "This workspace has no long-term memory yet. Checkpoints propose additions you "
            "accept, and an editor edits it (VS Code: Relavium: Edit Workspace Memory; Neovim: "
            f":RelaviumMemory).{waiting}"
        )
    return (
        f"Workspace memory (revision {memory.revision}, by {memory.source}):\n\n"
        f"{memory.text}{waiting}"
    )


async def _proposals(engine: Engine, working_dir: str) -> str:
    """The pending proposals, each with its diff: what accepting it would change."""
    proposals = await engine.memory.proposals(working_dir)
    if not proposals:
        return "No proposed changes to the workspace memory."
    blocks = [
        f"Proposal {p.id} (from session {p.session_id}, {p.reason} checkpoint):\n"
        f"{p.diff.unified if p.diff is not None else p.text}"
        for p in proposals
    ]
    return "\n\n".join([*blocks, "Accept with /memory accept <id>, or /memory reject <id>."])


async def _rewind(engine: Engine, session_id: str, argument: str) -> str:
    # Files only, on disk: an ACP client knows one session id, so the conversation stays.
    host = FilesystemHost()
    words = argument.split()
    if not words:
        turns = await engine.list_checkpoints(session_id)
        if not turns:
            return "No turn of this chat changed files yet."
        lines = [
            f"  /rewind {turn.user_sequence} — "
            + ", ".join(f"{f.path}{' (new)' if f.created else ''}" for f in turn.files)
            for turn in reversed(turns)
        ]
        return "File checkpoints, newest first:\n" + "\n".join(lines)
    if words[0] == "undo" and len(words) == 2:
        return _rewind_summary(
            "Undid the rewind", await engine.undo_rewind(session_id, words[1], host=host)
        )
    if len(words) != 1 or not words[0].isdigit():
        return "Usage: /rewind, /rewind <message number>, or /rewind undo <rewind id>"
    result = await engine.rewind(
        session_id, int(words[0]), files=True, conversation=False, host=host
    )
    return _rewind_summary(f"Rewound the files to before message {words[0]}", result) + (
        f"\nUndo with /rewind undo {result.rewind_id}"
    )


def _rewind_summary(headline: str, result: RewindResult) -> str:
    lines = [headline + "."]
    if result.restored:
        lines.append("Restored: " + ", ".join(result.restored))
    if result.deleted:
        lines.append("Deleted: " + ", ".join(result.deleted))
    lines.extend(f"Conflict: {c.path} {c.reason}" for c in result.conflicts)
    lines.extend(f"Not restored: {f.path} ({f.reason})" for f in result.failed)
    if len(lines) == 1:
        lines.append("No file needed to change.")
    return "\n".join(lines)


_REPLAY_MODES: dict[str, ToolReplayMode] = {
    "auto": "auto",
    "live": "live",
    "recorded": "recorded",
    "mixed": "mixed",
}


async def _replay(engine: Engine, session_id: str, argument: str) -> str:
    # The client follows one session, so the answer waits for the report and names the
    # replay session (an editor opens it like any chat: relavium/replaySession).
    words = argument.split()
    mode = _REPLAY_MODES.get(words[0] if words else "auto")
    live_tools = words[1:]
    if mode is None or (live_tools and mode != "mixed") or (mode == "mixed" and not live_tools):
        return "Usage: /replay, /replay auto|live|recorded, or /replay mixed <tool> [<tool>…]"
    report = await engine.replay(session_id, mode=mode, live_tools=live_tools)
    verdict = "identical to the original" if report.matches else "DIFFERENT from the original"
    lines = [
        f"Replayed {report.turns_replayed} turn(s) into session {report.replay_session_id}: "
        f"{verdict}.",
        f"Tool calls ({report.mode}): {report.recorded_tool_calls} from the recording, "
        f"{report.live_tool_calls} run again.",
    ]
    if report.stopped:
        lines.append("The replay stopped before its last turn.")
    lines.extend(f"  - {difference}" for difference in report.differences)
    return "\n".join(lines)


async def _model(engine: Engine, session_id: str, argument: str, hooks: CommandHooks) -> str:
    if argument:
        session = await engine.set_model(session_id, argument)
        await hooks.model_changed(session_id)
        return f"From the next message on, this chat asks {first_choice(session.chain).id} first."
    current = first_choice((await engine.session(session_id)).chain)
    choices = model_menu(await engine.model_choices(session_id), current)
    lines = [f"{'→' if choice == current else ' '} {choice.id}" for choice in choices]
    return "Models (switch with /model provider/model):\n" + "\n".join(lines)
