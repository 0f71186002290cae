"""A session as a Markdown transcript people read (``docs/design.md`` §9).

The conversation comes first: each exchange as the user's words (an attachment by its first
line — "Attached selection: src/app.py lines 3-9" — not its text), the agent's tool calls as
one-liners ("Read greeting.py", "Ran `pytest -q`"), its answer, and — when the turn changed
files — the summary "N files changed +a -r" with each file's counts. Turns that were stopped
or failed stay where they happened, marked. Deterministic like every export (no clock).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from relavium_lsp.contracts.content import TextPart, ToolCallPart
from relavium_lsp.contracts.plan import PlanEntry
from relavium_lsp.contracts.review import TurnChangedFile
from relavium_lsp.contracts.session import AgentSessionRecord, RolledBackTurn, SessionMessage
from relavium_lsp.export.turns import LogicalTurn, group_turns, message_text

_PLAN_MARKS = {"completed": "[x]", "in_progress": "[-]", "pending": "[ ]"}
MINUS = "\N{MINUS SIGN}"  # a real minus sign in the counts, as the editors show them
_QUIET_TOOLS = {"update_plan"}  # shown by the plan section, not as a step


def _arg(args: Mapping[str, Any], name: str) -> str:
    value = args.get(name)
    if isinstance(value, list):
        return " ".join(str(item) for item in value)
    return str(value) if value not in (None, "") else ""


def tool_phrase(name: str, args: Mapping[str, Any]) -> str:
    """A tool call as a user reads it: ``Read `greeting.py``` rather than ``read_file {…}``."""
    path = _arg(args, "path")
    phrases = {
        "read_file": f"Read `{path}`",
        "write_file": f"Wrote `{path}`",
        "edit_file": f"Edited `{path}`",
        "list_directory": f"Listed `{path or '.'}`",
        "search_files": f"Searched for `{_arg(args, 'pattern')}`",
        "find_files": f"Looked for files `{_arg(args, 'pattern')}`",
        "run_command": f"Ran `{_arg(args, 'command')}`",
        "git_status": "Checked git status",
        "git_commit": "Committed",
        "http_request": f"Fetched `{_arg(args, 'url')}`",
        "delegate": f"Asked `{_arg(args, 'agent')}`",
        "editor_diagnostics": f"Checked the problems in `{path or 'the open files'}`",
        "editor_symbols": f"Looked up symbols in `{path}`" if path else "Looked up symbols",
        "editor_definition": f"Found a definition in `{path}`",
        "editor_references": f"Found references in `{path}`",
    }
    return phrases.get(name, f"Used `{name}`")


def changes_summary(files: Sequence[TurnChangedFile]) -> str:
    """``2 files changed +3 \N{MINUS SIGN}1`` (the review's headline, §6.4)."""
    added = sum(changed.added for changed in files)
    removed = sum(changed.removed for changed in files)
    noun = "file" if len(files) == 1 else "files"
    return f"{len(files)} {noun} changed +{added} {MINUS}{removed}"


def _file_line(changed: TurnChangedFile) -> str:
    flags = (("new", changed.created), ("deleted", changed.deleted))
    notes = [note for note, flag in flags if flag]
    if changed.review != "pending":
        notes.append(changed.review)
    extra = f" ({', '.join(notes)})" if notes else ""
    return f"  - `{changed.path}`{extra} +{changed.added} {MINUS}{changed.removed}"


def _user_lines(message: SessionMessage) -> list[str]:
    """What the user wrote, then each attachment by its first line (a path, not its text)."""
    texts = [part.text for part in message.content if isinstance(part, TextPart)]
    typed, attached = (texts[0], texts[1:]) if texts else ("", [])
    lines = [typed.strip() or "*(no text)*", ""]
    for context in attached:
        first = context.strip().split("\n", 1)[0]
        if first:
            lines.append(f"> {first}")
    if attached:
        lines.append("")
    return lines


_INTERRUPTED = {
    "crash": "This turn was cut short: the server stopped before it finished.",
    "error": "This turn failed after it changed files; its changes are kept.",
    "aborted": "This turn was stopped after it changed files; its changes are kept.",
}


def _turn_lines(
    turn: LogicalTurn, changes: Mapping[int, Sequence[TurnChangedFile]], stopped: str | None
) -> list[str]:
    lines = ["### You", ""]
    for message in turn.user_messages:
        lines += _user_lines(message)
    if not turn.user_messages:
        lines += ["*(no text)*", ""]
    steps: list[str] = []
    answer: list[str] = []
    for message in turn.answers:
        if message.role != "assistant":
            continue
        calls = [part for part in message.content if isinstance(part, ToolCallPart)]
        shown = [call for call in calls if call.name not in _QUIET_TOOLS]
        steps.extend(f"- {tool_phrase(call.name, call.args)}" for call in shown)
        text = message_text(message).strip()
        if text:
            answer.append(text)
    if steps or answer:
        lines += ["### Assistant", ""]
    if steps:
        lines += [*steps, ""]
    if answer:
        lines += ["\n\n".join(answer), ""]
    files = [
        changed
        for message in turn.user_messages
        for changed in changes.get(message.sequence_number, ())
    ]
    if files:
        lines += [f"**{changes_summary(files)}**", "", *(_file_line(f) for f in files), ""]
    lines += [f"*{note}*" for note in _marker_notes(turn)]
    if stopped is not None:
        lines += [f"*{stopped}*", ""]
    return lines


def _marker_notes(turn: LogicalTurn) -> list[str]:
    """A line for compaction inside the turn and for an interruption that closed it (§2.2-2.3)."""
    notes: list[str] = []
    compactions = sum(1 for marker in turn.markers if marker.compaction is not None)
    if compactions:
        times = "once" if compactions == 1 else f"{compactions} times"
        notes.append(
            f"The model's view was compacted {times} during this turn to fit its context "
            "window (nothing was deleted)."
        )
    for marker in turn.markers:
        if marker.interruption is not None:
            notes.append(_INTERRUPTED[marker.interruption.reason])
    return [*notes, ""] if notes else []


def _stopped(rolled: RolledBackTurn) -> str:
    if rolled.stop_reason == "aborted":
        return "This turn was stopped before it finished."
    return "This turn failed" + (f" ({rolled.error_code})." if rolled.error_code else ".")


def markdown_transcript(
    record: AgentSessionRecord,
    messages: Sequence[SessionMessage],
    plan: Sequence[PlanEntry] | None,
    *,
    rolled_back: Sequence[RolledBackTurn] = (),
    changes: Mapping[int, Sequence[TurnChangedFile]] | None = None,
) -> str:
    """The Markdown document of a session (module doc)."""
    changes = changes or {}
    stopped = {rolled.user_message_sequence: _stopped(rolled) for rolled in rolled_back}
    every: list[SessionMessage] = sorted(
        [*messages, *(m for rolled in rolled_back for m in rolled.messages)],
        key=lambda message: message.sequence_number,
    )
    turns = group_turns(every)
    title = record.title or f"Chat {record.id[:8]}"
    exchanges = len(turns)
    facts = [f"agent `{record.agent_slug}`"]
    if record.model_id:
        facts.append(f"model `{record.model_id}`")
    facts.append(f"{exchanges} exchange{'' if exchanges == 1 else 's'}")
    facts.append(f"started {record.created_at[:10]}")
    lines = [f"# {title}", "", " · ".join(facts), ""]
    if plan:
        lines += ["## Plan", ""]
        lines += [f"- {_PLAN_MARKS.get(entry.status, '[ ]')} {entry.content}" for entry in plan]
        lines.append("")
    lines += ["## Conversation", ""]
    for turn in turns:
        first = turn.user_messages[0].sequence_number if turn.user_messages else None
        lines += _turn_lines(turn, changes, stopped.get(first) if first is not None else None)
    return "\n".join(lines).rstrip("\n") + "\n"
