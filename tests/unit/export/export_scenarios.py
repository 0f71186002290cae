"""The sessions behind the golden files: each a record plus its visible messages."""

from __future__ import annotations

from collections.abc import Callable

from relavium_lsp.contracts.content import (
    DurableReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.session import (
    AgentSessionRecord,
    CompactionMarker,
    InterruptionMarker,
    SessionMessage,
)
from tests.unit.export.export_support import Transcript, make_record

Scenario = tuple[AgentSessionRecord, list[SessionMessage]]


def plain_turns() -> Scenario:
    """Two question-and-answer turns, no tools."""
    t = Transcript()
    t.add("user", "What does `git rebase -i` do?")
    t.add("assistant", "It lets you reorder, squash or edit commits interactively.")
    t.add("user", "And how do I abort one?")
    t.add(
        "assistant",
        [
            DurableReasoningPart(text="The user wants the abort flag."),
            TextPart(
                text="Run:\n\n    git rebase --abort\n\nYour branch goes back to where it was."
            ),
        ],
    )
    return make_record(title="Git questions", turn_count=2), t.messages


def tool_rounds() -> Scenario:
    """One turn split across rows: two tool rounds (three calls) before the answer."""
    t = Transcript()
    t.add("user", "Summarise notes.txt and tell me what else is in the folder.")
    t.add(
        "assistant",
        [
            DurableReasoningPart(text="Read the notes first."),
            ToolCallPart(id="call-1", name="read_file", args={"path": "notes.txt"}),
        ],
    )
    t.add("tool", [ToolResultPart(tool_call_id="call-1", result="- ship on Friday\n- yes: tests")])
    t.add(
        "assistant",
        [
            TextPart(text="Now the folder."),
            ToolCallPart(id="call-2", name="list_directory", args={"path": ".", "depth": 1}),
            ToolCallPart(
                id="call-3", name="read_file", args={"path": "CHANGELOG.md", "startLine": 1}
            ),
        ],
    )
    t.add("tool", [ToolResultPart(tool_call_id="call-2", result="notes.txt\nCHANGELOG.md\nsrc/")])
    t.add(
        "tool",
        [ToolResultPart(tool_call_id="call-3", result="Error: no such file", is_error=True)],
    )
    t.add("assistant", "The notes plan a Friday release once tests pass; there is also src/.")
    t.add("user", "Thanks!")
    t.add("assistant", "You're welcome.")
    return make_record(title="Notes summary", turn_count=2), t.messages


def interrupted_final_turn() -> Scenario:
    """The last turn died mid tool loop: no node for it, all of it in metadata."""
    t = Transcript()
    t.add("user", "Create hello.py printing hello.")
    t.add(
        "assistant",
        [
            ToolCallPart(
                id="w1", name="write_file", args={"path": "hello.py", "content": "print('hello')\n"}
            )
        ],
    )
    t.add(
        "tool", [ToolResultPart(tool_call_id="w1", result="Created hello.py (1 lines, 15 bytes).")]
    )
    t.add("assistant", "Created hello.py.")
    t.add("user", "Now run it.")
    t.add(
        "assistant",
        [
            ToolCallPart(
                id="r1", name="run_command", args={"command": "python", "args": ["hello.py"]}
            )
        ],
    )
    t.add(
        "system",
        "[The previous turn was interrupted before it finished (the server stopped).]",
        interruption=InterruptionMarker(interrupted_after_sequence=6),
    )
    return make_record(title="Hello script", turn_count=2), t.messages


def non_ascii_title() -> Scenario:
    """A title with accents, guillemets, a dash and punctuation; non-ASCII user text."""
    t = Transcript()
    t.add("user", "Pourquoi le parseur « naïf » échoue-t-il sur “ß”?")
    t.add("assistant", "Parce qu'il compare des octets, pas des caractères.")
    return make_record(title="Déjà vu: «Fix» the naïve parser — now!!", turn_count=1), t.messages


def no_completed_turn() -> Scenario:
    """No title, no agent snapshot, and nothing ever answered: input → output."""
    t = Transcript()
    t.add("user", "Hello?")
    t.add("assistant", [ToolCallPart(id="g1", name="git_status", args={})])
    t.add("tool", [ToolResultPart(tool_call_id="g1", result="On branch main")])
    return make_record(title=None, snapshot={}, turn_count=1), t.messages


def template_braces() -> Scenario:
    """User text full of interpolation openers, plus a compaction boundary between turns."""
    t = Transcript()
    t.add("user", "Why does {{ctx.workingDir}} render empty?")
    t.add("assistant", "Because the variable is not set; `{{` starts interpolation.")
    t.add(
        "system",
        "Summary: the user asked why {{ctx.workingDir}} rendered empty.",
        compaction=CompactionMarker(dropped_through_sequence=2, mode="summarize"),
    )
    t.add("user", "Escape it: {{{raw}}} or { {spaced} } or a lone { brace\n{{second line}}")
    t.add("assistant", "Write it as a literal block instead.")
    return make_record(title="Templates {{ and }}", turn_count=2), t.messages


SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "plain_turns": plain_turns,
    "tool_rounds": tool_rounds,
    "interrupted_final_turn": interrupted_final_turn,
    "non_ascii_title": non_ascii_title,
    "no_completed_turn": no_completed_turn,
    "template_braces": template_braces,
}
