"""The demo's terminal output: colour rules, streamed tokens, compact event lines."""

from __future__ import annotations

import io

import pytest

from relavium_lsp.demo.render import (
    Console,
    Style,
    compact_value,
    format_cost,
    one_line,
    wants_color,
)


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert wants_color(FakeTerminal())
    assert not wants_color(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_color(FakeTerminal())
    assert wants_color(io.StringIO(), "always")
    monkeypatch.setenv("NO_COLOR", "")  # an empty NO_COLOR does not count
    assert wants_color(FakeTerminal())
    monkeypatch.setenv("TERM", "dumb")
    assert not wants_color(FakeTerminal())
    assert not wants_color(FakeTerminal(), "never")


def test_no_escape_codes_without_colour() -> None:
    out = io.StringIO()
    console = Console(out, Style(color=False))
    console.event(
        {
            "type": "session:turn_completed",
            "sequenceNumber": 5,
            "stopReason": "stop",
            "tokensUsed": {"inputTokens": 3, "outputTokens": 4},
        }
    )
    assert "\x1b[" not in out.getvalue()
    assert "session:turn_completed" in out.getvalue() and "3 in · 4 out" in out.getvalue()
    coloured = Style(color=True).paint("x", "red")
    assert coloured.startswith("\x1b[31m") and coloured.endswith("\x1b[0m")


def test_ascii_fallback_when_the_terminal_cannot_show_symbols() -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    style = Style.for_stream(stream, "never")
    assert not style.unicode
    assert style.symbol("ok") == "+" and style.rule == "="


def test_tokens_stream_on_one_line_and_events_start_a_new_one() -> None:
    out = io.StringIO()
    console = Console(out, Style(color=False))
    for token in ("Hello", ", ", "world.\nSecond", " line"):
        console.event({"type": "agent:token", "token": token, "sequenceNumber": 1})
    console.event(
        {
            "type": "cost:updated",
            "sequenceNumber": 2,
            "inputTokens": 1,
            "outputTokens": 2,
            "costMicrocents": 150,
            "priced": True,
        }
    )
    lines = out.getvalue().splitlines()
    assert lines[0] == "  │ Hello, world."
    assert lines[1] == "  │ Second line"
    assert lines[2].startswith("  ● #2") and "$0.000002" in lines[2]


def test_tool_calls_show_short_arguments_and_results_their_outcome() -> None:
    out = io.StringIO()
    console = Console(out, Style(color=False))
    console.event(
        {
            "type": "agent:tool_call",
            "sequenceNumber": 3,
            "toolId": "write_file",
            "toolInput": {"path": "a.py", "content": "x" * 500},
        }
    )
    console.event(
        {
            "type": "agent:tool_result",
            "sequenceNumber": 4,
            "toolId": "write_file",
            "success": False,
            "durationMs": 7,
            "outputSummary": "refused\nmore",
        }
    )
    text = out.getvalue()
    assert '"content": "<500 chars>"' in text and '"path": "a.py"' in text
    assert "write_file ✗ 7 ms · refused…" in text


def test_helpers() -> None:
    assert compact_value({"a": ["b" * 60, 1]}) == {"a": ["<60 chars>", 1]}
    assert one_line("first\nsecond") == "first…"
    assert one_line("x" * 100, 10) == "x" * 9 + "…"
    assert format_cost(0) == "$0"
    assert format_cost(123_456_789) == "$1.234568"
    assert format_cost(0, priced=False).startswith("not priced")


def test_checkpoints_say_why_and_events_of_other_sessions_name_theirs() -> None:
    out = io.StringIO()
    console = Console(out, Style(color=False))
    console.focus_session = "aaaaaaaa-own"
    checkpoint = {
        "type": "session:checkpoint",
        "sequenceNumber": 9,
        "reason": "new_session",
        "throughSequence": 4,
        "description": "Explained greet",
        "workspaceMemoryRevision": 2,
    }
    console.event({**checkpoint, "sessionId": "bbbbbbbb-earlier"})
    console.event({**checkpoint, "sessionId": "aaaaaaaa-own", "workspaceMemoryRevision": None})
    first, second = out.getvalue().splitlines()
    assert "[session bbbbbbbb] new_session introspection through message #4" in first
    assert "workspace memory rev 2 · Explained greet" in first
    assert "[session" not in second and "memory rev" not in second
