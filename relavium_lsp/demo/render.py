"""Turning the demo's LSP traffic into compact, human-readable terminal output.

Colour is used only when standard output is a terminal, ``NO_COLOR`` is unset (or empty) and
``TERM`` is not ``dumb`` — or when the user asks for it. Symbols fall back to ASCII when the
output encoding cannot show them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Literal, TextIO

ColorChoice = Literal["auto", "always", "never"]
EVENT_COLUMN = 26
MAX_INPUT_VALUE = 48
MAX_SUMMARY = 72

_CODES = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}
_UNICODE_SYMBOLS = {"ok": "✓", "fail": "✗", "event": "●", "bar": "│", "rpc": "⇄", "arrow": "▸"}
_ASCII_SYMBOLS = {"ok": "+", "fail": "x", "event": "*", "bar": "|", "rpc": "<>", "arrow": ">"}


def wants_color(stream: TextIO, choice: ColorChoice = "auto") -> bool:
    """Whether to colour ``stream``: the user's choice, else terminal + ``NO_COLOR`` rules."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def can_encode(stream: TextIO, text: str) -> bool:
    """Whether ``stream``'s encoding can represent ``text``."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


@dataclass(frozen=True)
class Style:
    """ANSI styling that is a no-op when colour is off, plus the symbol set in use."""

    color: bool
    unicode: bool = True

    @classmethod
    def for_stream(cls, stream: TextIO, choice: ColorChoice = "auto") -> Style:
        """The style suited to ``stream``."""
        return cls(
            color=wants_color(stream, choice),
            unicode=can_encode(stream, "".join(_UNICODE_SYMBOLS.values()) + "━\u2013"),
        )

    def paint(self, text: str, *styles: str) -> str:
        """``text`` wrapped in the ANSI codes of ``styles`` (names from ``_CODES``)."""
        if not self.color or not styles:
            return text
        codes = ";".join(_CODES[name] for name in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def symbol(self, name: str) -> str:
        """A named symbol (``ok``, ``fail``, ``event``, ``bar``, ``rpc``, ``arrow``)."""
        return (_UNICODE_SYMBOLS if self.unicode else _ASCII_SYMBOLS)[name]

    @property
    def rule(self) -> str:
        """The character used for horizontal rules."""
        return "━" if self.unicode else "="

    @property
    def dash(self) -> str:
        """A range dash."""
        return "\u2013" if self.unicode else "-"


def compact_value(value: Any) -> Any:
    """A tool argument shortened for display: long strings become ``<N chars>``."""
    if isinstance(value, str):
        if len(value) > MAX_INPUT_VALUE:
            return f"<{len(value)} chars>"
        return value
    if isinstance(value, dict):
        return {key: compact_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [compact_value(item) for item in value]
    return value


def one_line(text: str, limit: int = MAX_SUMMARY) -> str:
    """The first line of ``text``, cut to ``limit`` characters with an ellipsis."""
    lines = text.strip().splitlines()
    first = lines[0] if lines else ""
    more = len(lines) > 1
    if len(first) > limit:
        first, more = first[: limit - 1], True
    return first + ("…" if more else "")


def format_cost(microcents: int, priced: bool = True) -> str:
    """A cost in dollars (1 USD = 10^8 micro-cents); a model without a price says so."""
    if not priced:
        return "not priced (model missing from the price table)"
    if microcents == 0:
        return "$0"
    return f"${microcents / 100_000_000:.6f}"


class Console:
    """Writes the demo's output: step headers, notes, and the live event stream."""

    def __init__(self, out: TextIO, style: Style) -> None:
        self.out = out
        self.style = style
        self._in_text = False
        # The demo's own session: events of any other (an automatic introspection pass of an
        # earlier demo session) are labelled with theirs.
        self.focus_session: str | None = None

    # -- plain output ------------------------------------------------------------------------

    def write(self, text: str = "") -> None:
        """Print a line (ending any streamed text first)."""
        self.end_text()
        self.out.write(text + "\n")
        self.out.flush()

    def step(self, number: int, total: int, title: str) -> None:
        """A step header."""
        label = f" {number}/{total}  {title} "
        self.write()
        self.write(self.style.paint(self.style.rule * 2 + label + self.style.rule * 8, "bold"))

    def field(self, name: str, value: str) -> None:
        """An indented ``name  value`` line."""
        self.write(f"  {self.style.paint(f'{name:<12}', 'dim')}{value}")

    def ok(self, text: str) -> None:
        """A success line."""
        self.write(f"  {self.style.paint(self.style.symbol('ok'), 'green')} {text}")

    def fail(self, text: str) -> None:
        """A failure line."""
        self.write(f"  {self.style.paint(self.style.symbol('fail'), 'red', 'bold')} {text}")

    def rpc(self, text: str) -> None:
        """A line about a message the editor exchanged with the server."""
        self.write(f"  {self.style.paint(self.style.symbol('rpc'), 'magenta')} {text}")

    def block(self, text: str, *, indent: str = "    ") -> None:
        """Preformatted text (a diff, a YAML document), indented."""
        for line in text.rstrip("\n").split("\n"):
            self.write(indent + line)

    def prompt(self, who: str, text: str) -> None:
        """What the user typed."""
        arrow = self.style.symbol("arrow")
        self.write(f"  {self.style.paint(f'{who} {arrow}', 'bold', 'blue')} {text}")

    # -- the event stream --------------------------------------------------------------------

    def end_text(self) -> None:
        """Finish a line of streamed tokens."""
        if self._in_text:
            self._in_text = False
            self.out.write("\n")
            self.out.flush()

    def token(self, text: str) -> None:
        """Stream assistant text as it arrives, under a bar."""
        bar = self.style.paint(self.style.symbol("bar"), "cyan")
        pieces = text.split("\n")
        for index, piece in enumerate(pieces):
            if index > 0:
                self.out.write("\n")
                self._in_text = False
            if not self._in_text and (piece or index < len(pieces) - 1):
                self.out.write(f"  {bar} ")
                self._in_text = True
            self.out.write(piece)
        self.out.flush()

    def event(self, envelope: dict[str, Any]) -> None:
        """Render one ``relavium/sessionEvent`` envelope."""
        kind = str(envelope.get("type", "?"))
        if kind == "agent:token":
            self.token(str(envelope.get("token", "")))
            return
        detail, colour = describe_event(envelope, self.style)
        session = envelope.get("sessionId")
        if self.focus_session is not None and session not in (None, self.focus_session):
            detail = f"[session {str(session)[:8]}] {detail}".rstrip()
        name = self.style.paint(f"{kind:<{EVENT_COLUMN}}", colour)
        number = self.style.paint(f"#{envelope.get('sequenceNumber', '?'):<3}", "dim")
        self.write(
            f"  {self.style.paint(self.style.symbol('event'), colour)} {number} {name}"
            + (f" {detail}" if detail else "")
        )


def describe_event(envelope: dict[str, Any], style: Style) -> tuple[str, str]:
    """A one-line description of an event and the colour of its marker."""
    kind = envelope.get("type")
    if kind == "session:started":
        context = envelope.get("context") or {}
        resumed = " (resumed)" if envelope.get("resumed") else ""
        return f"agent {envelope.get('agentRef')} · model {envelope.get('model')}{resumed}" + (
            f" · {context.get('gitRef')}" if context.get("gitRef") else ""
        ), "blue"
    if kind == "session:turn_started":
        return f"user message #{envelope.get('userMessageSequence')}", "blue"
    if kind == "agent:reasoning":
        return one_line(str(envelope.get("text", ""))), "dim"
    if kind == "agent:tool_call":
        arguments = json.dumps(compact_value(envelope.get("toolInput", {})), ensure_ascii=False)
        return f"{envelope.get('toolId')} {arguments}", "yellow"
    if kind == "agent:approval_requested":
        preview = envelope.get("preview") or {}
        target = preview.get("path") or preview.get("command") or preview.get("host") or ""
        return f"{envelope.get('toolId')} wants {envelope.get('action')} on {target}", "yellow"
    if kind == "agent:tool_result":
        ok = bool(envelope.get("success"))
        mark = style.paint(style.symbol("ok" if ok else "fail"), "green" if ok else "red")
        summary = one_line(str(envelope.get("outputSummary", "")), 48)
        return (
            f"{envelope.get('toolId')} {mark} {envelope.get('durationMs')} ms · {summary}",
            "green" if ok else "red",
        )
    if kind == "agent:plan_updated":
        entries = [entry for entry in envelope.get("entries") or [] if isinstance(entry, dict)]
        done = sum(entry.get("status") == "completed" for entry in entries)
        marks = {"completed": "[x]", "in_progress": "[~]"}
        steps = "  ".join(
            f"{marks.get(str(entry.get('status')), '[ ]')} {entry.get('content')}"
            for entry in entries
        )
        return one_line(f"plan {done}/{len(entries)} done · {steps}", 120), "blue"
    if kind == "cost:updated":
        cost = format_cost(
            int(envelope.get("costMicrocents", 0)), bool(envelope.get("priced", True))
        )
        return (
            f"{envelope.get('inputTokens')} in · {envelope.get('outputTokens')} out tokens · "
            f"{cost}",
            "dim",
        )
    if kind == "session:turn_completed":
        usage = envelope.get("tokensUsed") or {}
        error = envelope.get("error")
        text = (
            f"{envelope.get('stopReason')} · {usage.get('inputTokens', 0)} in · "
            f"{usage.get('outputTokens', 0)} out"
        )
        if error:
            return f"{text} · {error.get('code')}: {error.get('message')}", "red"
        return text, "green"
    if kind == "session:exported":
        return f"{envelope.get('format', 'workflow')} → {envelope.get('workflowPath')}", "blue"
    if kind in ("session:compacted", "session:trimmed"):
        return (
            f"{envelope.get('messagesBefore')} → {envelope.get('messagesAfter')} messages",
            "dim",
        )
    if kind == "session:cancelled":
        return "", "red"
    if kind == "session:checkpoint":
        revision = envelope.get("workspaceMemoryRevision")
        memory = f" · workspace memory rev {revision}" if revision is not None else ""
        return (
            f"{envelope.get('reason')} introspection through message "
            f"#{envelope.get('throughSequence')}{memory} · "
            + one_line(str(envelope.get("description", "")), 60),
            "blue",
        )
    if kind == "session:checkpoint_failed":
        return f"{envelope.get('reason')} introspection failed: {envelope.get('message')}", "red"
    return "", "dim"
