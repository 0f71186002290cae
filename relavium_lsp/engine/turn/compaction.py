"""Keeping a long session inside its model's context window without deleting anything.

Two ways, both ending in a *system boundary marker* row (``compaction`` set) that the tail
loader honours: the marker goes first in what the model sees and nothing at or before
``droppedThroughSequence`` is loaded any more — but every row stays in the database.

- **summarize**: the session's own model writes a summary of everything visible so far
  (its spend is recorded like any other call); the marker carries the summary.
- **trim**: deterministic; the oldest visible messages are dropped from view, the newest kept
  verbatim, never separating a tool result from the call that asked for it.

Summarising falls back to trimming when the model fails or answers with nothing, or when the cost
cap refuses the call (checked before it is sent, like every call: ``engine/turn/model_calls.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from relavium_lsp.contracts.content import TextPart, estimate_tokens, plain_text
from relavium_lsp.contracts.events import (
    CompactionReason,
    SessionCompacted,
    SessionCompacting,
    SessionTrimmed,
)
from relavium_lsp.contracts.session import CompactionMarker, SessionMessage
from relavium_lsp.engine.scope import SessionScope
from relavium_lsp.engine.turn.governor import CostGovernor
from relavium_lsp.engine.turn.model_calls import CallFailed, CallRefused, answer_text
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.llm.projection import project_messages
from relavium_lsp.llm.seam import LlmMessage, LlmRequest

CompactionMode = Literal["summarize", "trim"]
SUMMARY_INSTRUCTIONS = (
    "You are compacting a long conversation between a user and a coding agent so it can "
    "continue within its context window. Write a concise summary that keeps: the user's goals "
    "and constraints, decisions made, files and symbols involved, tool results that still "
    "matter, and open questions or next steps. Do not invent anything."
)
SUMMARY_REQUEST = "Summarise the conversation above for your own later reference."
MIN_KEPT_MESSAGES = 4


class Compactor:
    """Compacts one session's visible history."""

    def __init__(self, scope: SessionScope, governor: CostGovernor) -> None:
        self._scope = scope
        self._governor = governor

    async def compact(
        self,
        *,
        reason: CompactionReason,
        mode: CompactionMode,
        chain: Sequence[ChainEntry],
        context_window: int,
        keep_messages: int | None = None,
    ) -> SessionCompacted | SessionTrimmed:
        """Compact now and return the terminal event (already emitted)."""
        scope = self._scope
        visible = await scope.store.run(
            lambda s: s.load_tail_within_budget(scope.session_id, context_window)
        )
        messages_before = len(visible)
        tokens_before = sum(estimate_tokens(message.content) for message in visible)
        if mode == "summarize":
            scope.emit(SessionCompacting(reason=reason))
            try:
                summary = await self._summarize(visible, chain)
            except BaseException:
                # Aborted while the summary was written: nothing changed, and whoever saw
                # session:compacting sees it end.
                scope.emit(
                    SessionCompacted(
                        reason=reason,
                        messages_before=messages_before,
                        messages_after=messages_before,
                        tokens_before=tokens_before,
                        tokens_after=tokens_before,
                        boundary_sequence=0,
                    )
                )
                raise
            if summary:
                newest = max(message.sequence_number for message in visible)
                marker = await self._append_marker(summary, newest, "summarize")
                event: SessionCompacted | SessionTrimmed = SessionCompacted(
                    reason=reason,
                    messages_before=messages_before,
                    messages_after=1,
                    tokens_before=tokens_before,
                    tokens_after=estimate_tokens(marker.content),
                    boundary_sequence=marker.sequence_number,
                )
                scope.emit(event)
                return event
        event = await self._trim(visible, reason, tokens_before, keep_messages)
        scope.emit(event)
        return event

    async def _summarize(
        self, visible: Sequence[SessionMessage], chain: Sequence[ChainEntry]
    ) -> str:
        if not visible:
            return ""
        messages = (
            *project_messages(visible, self._scope.media),
            LlmMessage(role="user", content=(TextPart(text=SUMMARY_REQUEST),)),
        )
        request = LlmRequest(
            model=chain[0].model, system=SUMMARY_INSTRUCTIONS, messages=messages, tools=()
        )
        try:
            return await answer_text(self._governor, chain, request)
        except (CallRefused, CallFailed):
            return ""  # trimmed instead (the cap refused the call, or the model failed)

    async def _trim(
        self,
        visible: Sequence[SessionMessage],
        reason: CompactionReason,
        tokens_before: int,
        keep_messages: int | None,
    ) -> SessionTrimmed:
        previous = visible[0] if visible and visible[0].compaction is not None else None
        body = visible[1:] if previous is not None else visible
        keep = max(MIN_KEPT_MESSAGES, keep_messages or len(body) // 2)
        first_kept = max(0, len(body) - keep)
        # Never open the kept window on a tool result whose call would be dropped.
        while first_kept > 0 and body[first_kept].role == "tool":
            first_kept -= 1
        dropped, kept = body[:first_kept], body[first_kept:]
        if not dropped:
            # History this short has nothing to trim: a marker would only add a message (and
            # grow the counts a trim exists to shrink), so the view is left as it is.
            return SessionTrimmed(
                reason=reason,
                messages_before=len(visible),
                messages_after=len(visible),
                tokens_before=tokens_before,
                tokens_after=tokens_before,
                boundary_sequence=previous.sequence_number if previous is not None else 0,
            )
        if dropped:
            dropped_through = dropped[-1].sequence_number
        elif previous is not None and previous.compaction is not None:
            dropped_through = previous.compaction.dropped_through_sequence
        else:
            dropped_through = 0
        note = (
            f"[{len(dropped)} earlier message(s) were trimmed from the model's view to stay "
            "within its context window; they remain in the session history.]"
        )
        if previous is not None:
            # Carry the earlier summary forward: the new marker supersedes it.
            note = f"{self._carried(previous)}\n\n{note}"
        marker = await self._append_marker(note, dropped_through, "trim")
        return SessionTrimmed(
            reason=reason,
            messages_before=len(visible),
            messages_after=len(kept) + 1,
            tokens_before=tokens_before,
            tokens_after=sum(estimate_tokens(message.content) for message in kept)
            + estimate_tokens(marker.content),
            boundary_sequence=marker.sequence_number,
        )

    def _carried(self, marker: SessionMessage) -> str:
        """What a superseded marker hands on to a trim's marker.

        Its summary; or, of a view a turn compacted into (§2.3), the user's requests and the
        summary notes — not its tool calls and cleared-output notes.
        """
        if marker.compaction is None or marker.compaction.view is None:
            return plain_text(marker.content)
        shown = project_messages([marker], self._scope.media)
        return "\n\n".join(
            plain_text(message.content) for message in shown if message.role == "user"
        )

    async def _append_marker(
        self, text: str, dropped_through: int, mode: CompactionMode
    ) -> SessionMessage:
        session_id = self._scope.session_id
        marker = CompactionMarker(dropped_through_sequence=dropped_through, mode=mode)
        return await self._scope.store.run(
            lambda s: s.append_message(
                session_id, "system", [TextPart(text=text)], compaction=marker
            )
        )
