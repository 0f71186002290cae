"""Keeping a turn's requests inside the model's context window (``docs/design.md`` §2.3).

Between turns, compaction keeps the *history* small (``engine/turn/compaction.py``); inside a turn
the message list grows with every tool round. :class:`TurnWindow` estimates each request
before it is sent against the window of the model asked first (the provider's configured
window, else the catalog's, or a smaller one a provider's refusal showed) and, when it would
not fit, compacts the turn's view in the order the best agents use:

1. **Clear old tool results** the model has already acted on (a later assistant message
   follows them): the call stays; its bulky result is replaced by a short note naming an
   artifact that holds the text, which the model can read back with ``read_tool_output``.
   The newest :data:`KEEP_RECENT_RESULTS` tool messages keep their results while clearing
   the older ones is enough.
2. **Summarise older rounds** of the turn if that is still too large: the model (a priced,
   cap-checked call like any other, ``engine/turn/model_calls.py``) writes a summary of the work
   so far, which replaces the rounds before the newest :data:`KEEP_RECENT_ROUNDS` as a note
   after the user's message (user role, as between turns: an assistant message there would
   merge with the next one ahead of its reasoning, which Anthropic refuses); if the request
   is *still* too large, the agent's messages of earlier turns leave the view too (the
   summary was written with them in view). When the call is refused or fails, a
   deterministic digest of the calls made stands in.

The user's messages are never cleared or summarised. Compaction is a *view*: every original
row stays in the history; the view is stored as a ``system`` marker row whose content is
the new view of everything at or before its ``droppedThroughSequence``, message by message
(``CompactionMarker.view``), so the next turn — or a resume in another process — projects
exactly the view this turn had (the store keeps a marker that continues the previous one's
view as what it adds, and hands it back whole: ``store/rows/marker_views.py``).
``session:compacting`` / ``session:compacted`` (reason ``context_window``, with the counts of
cleared results and summarised messages) announce it.

Estimates are four characters a token, corrected by what providers report: the input
tokens of every answered call, and the count in a ``context_length`` refusal (the turn then
compacts and retries the call once, ``engine/turn/runner.py``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from relavium_lsp.contracts.content import (
    ContentPart,
    MediaPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    de_inline,
)
from relavium_lsp.contracts.events import SessionCompacted, SessionCompacting
from relavium_lsp.contracts.session import CompactionMarker, ViewMessage
from relavium_lsp.engine.scope import SessionScope
from relavium_lsp.engine.turn.governor import CostGovernor
from relavium_lsp.engine.turn.model_calls import CallFailed, CallRefused, CallSpend, answer_text
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.llm.projection import project_messages
from relavium_lsp.llm.seam import LlmError, LlmMessage, LlmRequest

# The newest tool messages whose results stay while clearing older ones is enough (the
# default of Anthropic's tool-result clearing).
KEEP_RECENT_RESULTS = 3
# The newest rounds (an assistant message and its tool message) kept verbatim by a summary.
KEEP_RECENT_ROUNDS = 2
# A result shorter than this is not worth its note.
MIN_CLEARED_CHARS = 800
# Compaction aims below this share of what the messages may take, so the next rounds have
# room to grow; they may always take this many tokens (the planner's history floor).
TARGET_SHARE = 0.6
MIN_MESSAGE_BUDGET = 1_024
SUMMARY_MAX_TOKENS = 1_024
# Corrections of the four-characters-a-token estimate stay within these factors: a provider
# reporting fewer tokens never makes the estimate smaller than the plain count.
MIN_SCALE, MAX_SCALE = 1.0, 4.0
DIGEST_MAX_LINES = 60

SUMMARY_INSTRUCTIONS = (
    "You are compacting your own work in a long turn of a conversation with a user so you "
    "can continue within your context window. Write a concise summary of the work so far: "
    "what the user asked, what you found (files, symbols, facts), what you changed, tool "
    "results that still matter (name the artifact ids of cleared outputs you may need again), "
    "and what remains to do. Do not invent anything."
)
SUMMARY_REQUEST = "Summarise your work above for your own later reference; I will continue it."
SUMMARY_HEADING = (
    "[Context note, not from the user] Summary of your earlier work on this request (older "
    "rounds were compacted to fit the context window; cleared tool outputs are kept as "
    "artifacts, readable with read_tool_output):\n"
)


@dataclass(frozen=True)
class ViewEntry:
    """One message of a turn's view and the newest stored row it stands for."""

    message: LlmMessage
    through: int
    # A message of this turn's rounds (after its user message), not of the history before.
    in_turn: bool = False


@dataclass
class TurnView:
    """The messages a turn sends, oldest first (history, its user message, then rounds)."""

    entries: list[ViewEntry] = field(default_factory=list)

    @classmethod
    def of_history(cls, history: Sequence[LlmMessage], user_sequence: int) -> TurnView:
        """A turn's first view: the history tail, which ends with the turn's user message."""
        return cls([ViewEntry(message, user_sequence) for message in history])

    def add(self, message: LlmMessage, through: int) -> None:
        """A message of this turn (its newest stored row is ``through``)."""
        self.entries.append(ViewEntry(message, through, in_turn=True))

    def messages(self) -> tuple[LlmMessage, ...]:
        """The messages in the order they are sent."""
        return tuple(entry.message for entry in self.entries)


RequestFor = Callable[[Sequence[LlmMessage]], LlmRequest]


@dataclass
class _Compaction:
    """One compaction in progress: the edited view and what it took out."""

    entries: list[ViewEntry]
    # How many leading entries the marker covers (every edited one, and whole rounds).
    covered: int = 0
    cleared: int = 0
    summarized: int = 0
    mode: Literal["clear", "summarize"] = "clear"


class TurnWindow:
    """The context window of one turn: estimates, corrections and in-turn compaction."""

    def __init__(
        self,
        scope: SessionScope,
        governor: CostGovernor,
        *,
        chain: Sequence[ChainEntry],
        context_window: int | None,
        output_reserve: int,
        threshold: float,
    ) -> None:
        self._scope = scope
        self._governor = governor
        self._chain = chain
        self._reserve = output_reserve
        self._threshold = threshold
        # None while the model's window is not known: nothing is compacted ahead of a refusal.
        self.context_window: int | None = None
        self.trigger: int | None = None
        if context_window is not None:
            self._use_window(context_window)
        self.scale = MIN_SCALE
        # What the summaries written in this turn cost (counted in the turn's usage).
        self.spend = CallSpend()

    def _use_window(self, context_window: int) -> None:
        self.context_window = context_window
        # Input beyond this does not fit: the window less the room kept for the answer (a
        # reserve larger than a small window leaves it half, as the history budget does).
        limit = max(context_window // 2, context_window - self._reserve)
        self.trigger = max(1, min(int(self._threshold * context_window), limit))

    def estimate(self, request: LlmRequest) -> int:
        """The request's input tokens as this turn now estimates them."""
        return math.ceil(request.estimated_input_tokens() * self.scale)

    def observe_usage(self, request: LlmRequest, input_tokens: int) -> None:
        """A provider reported ``input_tokens`` for ``request``: correct the estimate."""
        plain = request.estimated_input_tokens()
        if input_tokens > 0 and plain > 0:
            self.scale = min(MAX_SCALE, max(MIN_SCALE, input_tokens / plain))

    def observe_overflow(self, request: LlmRequest, error: LlmError) -> None:
        """The provider refused ``request`` as larger than the model's window: believe it.

        The count it reported (else the request as estimated) becomes the estimate of that
        request, and the window is taken to be no larger than it — the model's real window is
        smaller than configured or catalogued, or was not known — so the next :meth:`fit`
        compacts below it.
        """
        plain = max(1, request.estimated_input_tokens())
        refused = error.reported_tokens
        if refused is not None:
            self.scale = min(MAX_SCALE, max(MIN_SCALE, refused / plain))
        else:
            refused = self.estimate(request)
        known = self.context_window
        self._use_window(refused if known is None else min(known, refused))

    async def fit(self, view: TurnView, request_for: RequestFor) -> TurnView:
        """``view`` when its request fits the trigger; else the compacted view (stored).

        What compaction can take out is the messages: the system prompt and the tool specs
        stay. So the messages always get at least :data:`MIN_MESSAGE_BUDGET` tokens (as the
        history does when a turn is planned), and the target is measured on them.
        """
        if self.trigger is None:
            return view  # the window is not known: a provider's refusal will say
        before = self.estimate(request_for(view.messages()))
        fixed = self.estimate(request_for(()))
        trigger = max(self.trigger, fixed + MIN_MESSAGE_BUDGET)
        if before <= trigger or not _reducible(view.entries):
            return view  # fits, or holds nothing compaction may take out: sent as it is
        scope = self._scope
        scope.emit(SessionCompacting(reason="context_window"))
        target = fixed + int((trigger - fixed) * TARGET_SHARE)
        work = _Compaction(list(view.entries))
        try:
            await self._clear_results(work, request_for, target)
            if self.estimate(request_for(_messages(work.entries))) > target:
                await self._summarize(work, request_for, target)
            if work.covered == 0:
                # Nothing could be taken out (one huge round): the call goes as it is.
                scope.emit(_compacted(view, view, before, before, 0, work))
                return view
            compacted, marker_sequence = await self._store_view(work)
        except BaseException:
            # Aborted (or failed) mid-way, e.g. while the summary was written: this turn's view
            # is as it was, and whoever saw session:compacting sees it end.
            scope.emit(_compacted(view, view, before, before, 0, _Compaction(view.entries)))
            raise
        after = self.estimate(request_for(compacted.messages()))
        scope.emit(_compacted(view, compacted, before, after, marker_sequence, work))
        return compacted

    async def _clear_results(self, work: _Compaction, request_for: RequestFor, target: int) -> None:
        """Step 1: replace old, acted-on tool results by notes (newest kept while enough)."""
        entries = work.entries
        last_assistant = max(
            (i for i, entry in enumerate(entries) if entry.message.role == "assistant"),
            default=-1,
        )
        acted_on = [
            i
            for i, entry in enumerate(entries)
            if entry.message.role == "tool" and i < last_assistant and _clearable(entry.message)
        ]
        recent = set(acted_on[-KEEP_RECENT_RESULTS:])
        for keep_recent in (True, False):
            for index in acted_on:
                if keep_recent and index in recent:
                    continue
                if not _clearable(entries[index].message):
                    continue
                message, cleared = await self._cleared(entries[index].message)
                entries[index] = replace(entries[index], message=message)
                work.cleared += cleared
                work.covered = max(work.covered, index + 1)
            if self.estimate(request_for(_messages(entries))) <= target:
                return

    async def _cleared(self, message: LlmMessage) -> tuple[LlmMessage, int]:
        """A tool message with its long results kept as artifacts and replaced by notes."""
        parts: list[ContentPart] = []
        cleared = 0
        for part in message.content:
            if isinstance(part, ToolResultPart) and len(part.result) >= MIN_CLEARED_CHARS:
                artifact_id = await self._scope.store.save_artifact(
                    self._scope.session_id, part.tool_call_id, part.result
                )
                parts.append(part.model_copy(update={"result": _note(part.result, artifact_id)}))
                cleared += 1
            elif isinstance(part, MediaPart):
                label = part.name or part.mime_type
                parts.append(TextPart(text=f"[{label} returned by a tool; cleared from view]"))
                cleared += 1
            else:
                parts.append(part)
        return LlmMessage(role=message.role, content=tuple(parts)), cleared

    async def _summarize(self, work: _Compaction, request_for: RequestFor, target: int) -> None:
        """Step 2: the turn's older rounds (and if need be earlier turns' answers) → a summary."""
        entries = work.entries
        first_round = next((i for i, entry in enumerate(entries) if entry.in_turn), len(entries))
        starts = [
            i for i in range(first_round, len(entries)) if entries[i].message.role == "assistant"
        ]
        if len(starts) < 2:
            return  # not one round to summarise
        placeholder = ViewEntry(_summary_message("x" * SUMMARY_MAX_TOKENS * 4), 0)
        history = entries[:first_round]
        # Keep the newest rounds verbatim — fewer when that is what gets below the target.
        for keep in range(min(KEEP_RECENT_ROUNDS, len(starts) - 1), 0, -1):
            cut = starts[-keep]
            after = _messages([*history, placeholder, *entries[cut:]])
            fits = self.estimate(request_for(after)) <= target
            if fits:
                break
        covered = entries[:cut]
        if not fits:
            # Earlier turns' answers go too: the user's messages stay, verbatim.
            history = [entry for entry in history if entry.message.role == "user"]
        summary = await self._summary_text(covered, request_for)
        work.entries = [
            *history,
            ViewEntry(_summary_message(summary), covered[-1].through, in_turn=True),
            *entries[cut:],
        ]
        # The marker covers the summary, and any result cleared in the rounds kept after it.
        work.covered = len(history) + 1 + max(0, work.covered - cut)
        work.summarized += len(covered) - len(history)
        work.mode = "summarize"

    async def _summary_text(self, covered: Sequence[ViewEntry], request_for: RequestFor) -> str:
        """The model's summary of ``covered``; a digest of the calls when it cannot write one."""
        base = request_for(_messages(covered))
        request = base.model_copy(
            update={
                "system": SUMMARY_INSTRUCTIONS,
                "messages": (
                    *base.messages,
                    LlmMessage(role="user", content=(TextPart(text=SUMMARY_REQUEST),)),
                ),
                "tool_choice": "none",
                "max_tokens": SUMMARY_MAX_TOKENS,
                "temperature": None,
            }
        )
        window = self.context_window or 0  # known whenever the turn compacts
        if self.estimate(request) + SUMMARY_MAX_TOKENS <= window:
            try:
                text = await answer_text(self._governor, self._chain, request, self.spend)
            except (CallRefused, CallFailed):
                text = ""  # the digest below stands in
            if text:
                return text
        return _digest(covered)

    async def _store_view(self, work: _Compaction) -> tuple[TurnView, int]:
        """Append the marker row holding the covered view; the view as it projects back.

        Returns the new view and the marker's sequence number.
        """
        entries = work.entries
        covered = work.covered
        # Rows at or before the boundary that the view does not show would be lost: the
        # marker covers every entry standing for them (the history shares one ``through``).
        boundary = entries[covered - 1].through
        while covered < len(entries) and entries[covered].through <= boundary:
            covered += 1
        while covered < len(entries) and entries[covered].message.role == "tool":
            covered += 1  # never keep a result without its call
        boundary = entries[covered - 1].through
        parts: list[ContentPart] = []
        layout: list[ViewMessage] = []
        shown_in_turn: list[bool] = []
        for entry in entries[:covered]:
            content = [
                part for part in entry.message.content if not isinstance(part, ReasoningPart)
            ]
            if content:
                parts.extend(content)
                layout.append(ViewMessage(role=entry.message.role, parts=len(content)))
                shown_in_turn.append(entry.in_turn)
        scope = self._scope
        session_id = scope.session_id
        durable = de_inline(parts, scope.media)
        marker = CompactionMarker(dropped_through_sequence=boundary, mode=work.mode, view=layout)
        row = await scope.store.run(
            lambda s: s.append_message(session_id, "system", durable, compaction=marker)
        )
        # Exactly what a later turn, or a resume, will project from the stored marker.
        shown = project_messages([row], scope.media)
        view = [
            ViewEntry(message, boundary, in_turn=in_turn)
            for message, in_turn in zip(shown, shown_in_turn, strict=True)
        ]
        return TurnView(view + entries[covered:]), row.sequence_number


def _reducible(entries: Sequence[ViewEntry]) -> bool:
    """Whether the view holds an acted-on result to clear or an older round to summarise."""
    assistants = [i for i, entry in enumerate(entries) if entry.message.role == "assistant"]
    if not assistants:
        return False
    if sum(1 for i in assistants if entries[i].in_turn) > 1:
        return True
    return any(
        entry.message.role == "tool" and _clearable(entry.message)
        for entry in entries[: assistants[-1]]
    )


def _messages(entries: Sequence[ViewEntry]) -> list[LlmMessage]:
    return [entry.message for entry in entries]


def _clearable(message: LlmMessage) -> bool:
    return any(
        (isinstance(part, ToolResultPart) and len(part.result) >= MIN_CLEARED_CHARS)
        or isinstance(part, MediaPart)
        for part in message.content
    )


def _note(result: str, artifact_id: str) -> str:
    lines = result.count("\n") + 1
    size = len(result.encode("utf-8"))
    call = json.dumps({"artifactId": artifact_id})
    return (
        f"[This tool output ({lines:,} lines, {size:,} bytes) was cleared from view to save "
        f"context. It is kept as artifact {artifact_id}: call read_tool_output {call} to read "
        "it again.]"
    )


def _summary_message(summary: str) -> LlmMessage:
    return LlmMessage(role="user", content=(TextPart(text=SUMMARY_HEADING + summary),))


def _digest(covered: Sequence[ViewEntry]) -> str:
    """What the summarised rounds did, without a model: each call and how it ended."""
    outcomes: dict[str, str] = {}
    for entry in covered:
        for part in entry.message.content:
            if isinstance(part, ToolResultPart):
                outcomes[part.tool_call_id] = "failed" if part.is_error else "done"
    lines: list[str] = []
    for entry in covered:
        if not entry.in_turn or entry.message.role == "tool":
            continue
        for part in entry.message.content:
            if isinstance(part, TextPart) and part.text.startswith(SUMMARY_HEADING):
                lines.extend(part.text.removeprefix(SUMMARY_HEADING).splitlines())  # carried on
            elif isinstance(part, TextPart) and part.text.strip():
                lines.append(f"- said: {_short(part.text)}")
            elif isinstance(part, ToolCallPart):
                args = _short(json.dumps(part.args, sort_keys=True))
                lines.append(f"- called {part.name} {args}: {outcomes.get(part.id, 'no result')}")
    if len(lines) > DIGEST_MAX_LINES:
        skipped = len(lines) - DIGEST_MAX_LINES
        lines = [f"- ({skipped} earlier steps left out)", *lines[-DIGEST_MAX_LINES:]]
    return "\n".join(lines) or "- (no tool calls)"


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _compacted(
    before_view: TurnView,
    after_view: TurnView,
    tokens_before: int,
    tokens_after: int,
    boundary: int,
    work: _Compaction,
) -> SessionCompacted:
    return SessionCompacted(
        reason="context_window",
        messages_before=len(before_view.entries),
        messages_after=len(after_view.entries),
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        boundary_sequence=boundary,
        cleared_tool_results=work.cleared,
        summarized_messages=work.summarized,
    )
