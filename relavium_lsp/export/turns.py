"""Logical turns: how export and replay read a transcript.

A *logical turn* is the contiguous ``user`` message(s) plus the ``assistant`` and ``tool``
messages answering them — however many rows the engine split it into (``user →
assistant(tool_call) → tool → assistant(text)`` is one turn). A new user message after any
answer starts the next turn; a ``system`` row is never part of a turn: an interruption
marker closes the one before it, a compaction boundary does not (compaction inside a turn
writes its marker between two rounds of the same turn, ``docs/design.md`` §2.3; between
turns it comes before a user message, which starts the next turn anyway). A turn is
*completed* when it produced final assistant text: an assistant message with non-blank text
and no tool call. Unanswered or interrupted turns are not completed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from relavium_lsp.contracts.content import TextPart, ToolCallPart
from relavium_lsp.contracts.session import SessionMessage


@dataclass
class LogicalTurn:
    """The user message(s) of one turn and the messages that answered them, in order."""

    user_messages: list[SessionMessage] = field(default_factory=list)
    answers: list[SessionMessage] = field(default_factory=list)
    # System rows that belong to it without being part of it: the compaction markers written
    # inside it, and the interruption marker that closed it (if one did).
    markers: list[SessionMessage] = field(default_factory=list)

    @property
    def completed(self) -> bool:
        """Whether the turn produced final assistant text."""
        return any(is_final_answer(message) for message in self.answers)

    def prompt_text(self) -> str:
        """The user's text: text parts joined by newlines, messages by a blank line."""
        texts = (message_text(message) for message in self.user_messages)
        return "\n\n".join(text for text in texts if text)

    def tool_names(self) -> list[str]:
        """Names of the tools the turn's assistant messages called, deduped, first use first."""
        names = (
            part.name
            for message in self.answers
            if message.role == "assistant"
            for part in message.content
            if isinstance(part, ToolCallPart)
        )
        return list(dict.fromkeys(names))


def message_text(message: SessionMessage) -> str:
    """A message's text parts joined by newlines (reasoning, tools and media left out)."""
    return "\n".join(part.text for part in message.content if isinstance(part, TextPart))


def is_final_answer(message: SessionMessage) -> bool:
    """An assistant message with non-blank text and no tool call."""
    if message.role != "assistant":
        return False
    if any(isinstance(part, ToolCallPart) for part in message.content):
        return False
    return any(isinstance(part, TextPart) and part.text.strip() for part in message.content)


def group_turns(messages: Iterable[SessionMessage]) -> list[LogicalTurn]:
    """Split an ordered transcript into logical turns (system rows belong to none)."""
    turns: list[LogicalTurn] = []
    current: LogicalTurn | None = None
    for message in messages:
        if message.role == "system":
            if current is not None and (message.compaction is None or not current.completed):
                current.markers.append(message)
            if message.compaction is None:
                current = None
        elif message.role == "user":
            if current is None or current.answers:
                current = LogicalTurn()
                turns.append(current)
            current.user_messages.append(message)
        else:
            if current is None:
                # Answers with no user message before them (history that starts mid-turn,
                # e.g. after a boundary): they still form a turn, with an empty prompt.
                current = LogicalTurn()
                turns.append(current)
            current.answers.append(message)
    return turns


def completed_turns(messages: Sequence[SessionMessage]) -> list[LogicalTurn]:
    """Only the turns that produced final assistant text, in order."""
    return [turn for turn in group_turns(messages) if turn.completed]
