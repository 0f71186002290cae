"""The Markdown transcript: the conversation first, tool calls as one-liners, changes summed."""

from __future__ import annotations

from relavium_lsp.contracts.content import TextPart, ToolCallPart, ToolResultPart
from relavium_lsp.contracts.plan import PlanEntry
from relavium_lsp.contracts.review import TurnChangedFile
from relavium_lsp.contracts.session import RolledBackTurn
from relavium_lsp.export.documents import render_export
from relavium_lsp.export.markdown import markdown_transcript, tool_phrase
from tests.unit.export.export_support import Transcript, make_record


def _changed(path: str, added: int, removed: int, **flags: object) -> TurnChangedFile:
    return TurnChangedFile.model_validate(
        {"path": path, "created": False, "deleted": False, "added": added, "removed": removed,
         "review": "pending", **flags}
    )  # fmt: skip


def _conversation() -> tuple[Transcript, RolledBackTurn]:
    transcript = Transcript()
    transcript.add("system", "You are a careful assistant.")
    attached = "Attached selection: src/greeting.py lines 1-2\n```python\ndef greet(): ...\n```"
    transcript.add("user", [TextPart(text="Make greet() polite"), TextPart(text=attached)])  # 2
    transcript.add(
        "assistant",
        [
            ToolCallPart(id="a", name="read_file", args={"path": "greeting.py"}),
            ToolCallPart(id="b", name="update_plan", args={"plan": []}),
            ToolCallPart(id="c", name="run_command", args={"command": ["pytest", "-q"]}),
        ],
    )
    transcript.add(
        "tool",
        [ToolResultPart(tool_call_id=call, result="ok") for call in ("a", "b", "c")],
    )
    transcript.add("assistant", [TextPart(text="Done: greet() says please.")])
    transcript.add("user", "Thanks")  # 6
    transcript.add("assistant", "You're welcome.")
    rolled = RolledBackTurn(
        user_message_sequence=8,
        stop_reason="aborted",
        messages=[
            transcript.messages[5].model_copy(
                update={"sequence_number": 8, "content": [TextPart(text="Now rename it")]}
            )
        ],
    )
    return transcript, rolled


def test_the_transcript_reads_as_a_conversation_with_its_changes() -> None:
    transcript, rolled = _conversation()
    changes = {
        2: [
            _changed("greeting.py", 2, 1),
            _changed("notes.md", 3, 0, created=True, review="kept"),
        ]
    }
    plan = [PlanEntry(content="Edit greet", status="completed"), PlanEntry(content="Test")]
    text = markdown_transcript(
        make_record(title="Polite greetings"),
        transcript.messages,
        plan,
        rolled_back=[rolled],
        changes=changes,
    )
    assert text.startswith(
        "# Polite greetings\n\nagent `relavium-default` · model `claude-sonnet-4-5`"
    )
    assert "· 3 exchanges · started 2025-03-01" in text
    assert "## Plan\n\n- [x] Edit greet\n- [ ] Test\n" in text
    # The system prompt is not the first thing a reader meets: it is not there at all.
    assert "careful assistant" not in text
    assert (
        "### You\n\nMake greet() polite\n\n> Attached selection: src/greeting.py lines 1-2\n\n"
        "### Assistant\n\n"
        "- Read `greeting.py`\n- Ran `pytest -q`\n\nDone: greet() says please.\n\n"
        "**2 files changed +5 \N{MINUS SIGN}1**\n\n"
        "  - `greeting.py` +2 \N{MINUS SIGN}1\n"
        "  - `notes.md` (new, kept) +3 \N{MINUS SIGN}0\n"
    ) in text
    assert "update_plan" not in text
    assert "def greet(): ..." not in text, "an attachment shows by its first line only"
    stopped = "### You\n\nNow rename it\n\n*This turn was stopped before it finished.*\n"
    assert text.endswith(stopped)
    # Deterministic: the same session renders to the same bytes.
    again = markdown_transcript(
        make_record(title="Polite greetings"),
        transcript.messages,
        plan,
        rolled_back=[rolled],
        changes=changes,
    )
    assert again == text


def test_a_markdown_export_is_named_after_the_title() -> None:
    transcript, _ = _conversation()
    outcome = render_export(make_record(title="Straße fix"), transcript.messages, "markdown")
    assert outcome.file_name == "strasse-fix.md"
    untitled = render_export(make_record(title=None), transcript.messages, "markdown")
    assert untitled.file_name == f"{untitled.session_id}.md"
    assert untitled.content.startswith(f"# Chat {untitled.session_id[:8]}\n")


def test_tool_phrases_name_what_was_done() -> None:
    assert tool_phrase("search_files", {"pattern": "def greet"}) == "Searched for `def greet`"
    assert tool_phrase("list_directory", {}) == "Listed `.`"
    assert tool_phrase("mcp__time__now", {"tz": "UTC"}) == "Used `mcp__time__now`"
