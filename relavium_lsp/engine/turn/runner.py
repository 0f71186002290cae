"""One assistant turn: stream, collect tool calls, run them, repeat until final text.

Every message is committed the moment it is complete — the assistant message that asked for
tools, each tool result, the final answer — so a crash loses at most the message in flight.
Before every model call the request is fitted into the model's context window
(``engine/turn/window.py``: old tool results cleared, older rounds summarised), and every call
goes through ``engine/turn/model_calls.py`` (the cost cap checked before it is sent, priced after).
A provider's ``context_length`` refusal corrects the estimate, and the call is retried once
after compacting. The turn never decides what happens to the transcript on failure; it
reports a :class:`TurnResult` and the session applies the rules (§2.2).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from relavium_lsp.contracts.content import (
    ContentPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    de_inline,
)
from relavium_lsp.contracts.events import (
    AgentReasoning,
    AgentToken,
    ErrorCode,
    StopReason,
    TokenUsage,
    TurnError,
    TurnResult,
)
from relavium_lsp.engine.scope import SessionScope
from relavium_lsp.engine.turn.governor import CostGovernor
from relavium_lsp.engine.turn.model_calls import CallRefused, CallSpend, stream_priced
from relavium_lsp.engine.turn.window import TurnView, TurnWindow
from relavium_lsp.llm.fallback import AttemptStarted, ChainEntry
from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmError,
    LlmErrorKind,
    LlmMessage,
    LlmRequest,
    LlmStopReason,
    ReasoningDelta,
    StopChunk,
    TextDelta,
    ToolCallEnd,
    ToolSpec,
)
from relavium_lsp.tools.base import ToolCallContext

if TYPE_CHECKING:
    from relavium_lsp.contracts.session import SessionMessage
    from relavium_lsp.store.sessions import SessionStore

# How long a fully buffered stream is parsed before the loop gets a turn (see _call_model).
YIELD_EVERY_S = 0.001

_ERROR_CODES: dict[LlmErrorKind, ErrorCode] = {
    "rate_limit": "provider_rate_limit",
    "overloaded": "provider_unavailable",
    "timeout": "provider_unavailable",
    "transport": "provider_unavailable",
    "auth": "provider_auth",
    "bad_request": "validation",
    "content_filter": "content_filter",
    "context_length": "validation",
    "cancelled": "cancelled",
    "unknown": "internal",
}


def _still_too_long(error: LlmError) -> TurnError:
    return TurnError(
        code="validation",
        message=(
            "The conversation does not fit the model's context window even after compacting "
            f"it; start a new session or choose a model with a larger window ({error.message})."
        ),
    )


def turn_error_from(error: LlmError) -> TurnError:
    """Map a provider failure onto the closed ErrorCode set."""
    return TurnError(
        code=_ERROR_CODES[error.kind], message=error.message, retryable=error.retryable
    )


@dataclass
class TurnPlan:
    """Everything fixed for the duration of one turn."""

    chain: Sequence[ChainEntry]
    system: str
    history: Sequence[LlmMessage]
    tools: Sequence[ToolSpec]
    temperature: float | None
    max_tokens: int | None
    max_tool_turns: int
    tool_context: ToolCallContext
    # The turn's user message (the history ends with it) and what its window allows (§2.3;
    # context_window None: not known, so only a provider's refusal makes the turn compact).
    user_sequence: int
    context_window: int | None
    output_reserve: int
    compact_threshold: float
    # The agent answering: every assistant message names it (attribution, §2.5).
    agent_slug: str | None = None


@dataclass
class _ModelReply:
    model: str
    text: list[str] = field(default_factory=list)
    reasoning: list[ReasoningPart] = field(default_factory=list)
    open_reasoning: list[str] = field(default_factory=list)
    tool_calls: list[ToolCallEnd] = field(default_factory=list)
    stop_reason: LlmStopReason | None = None
    error: LlmError | None = None
    # What this one model call cost, fallback attempts included (stored on its message).
    spend: CallSpend = field(default_factory=CallSpend)
    input_tokens: int = 0  # what the provider said the request held (0: not said)

    def add_reasoning(self, delta: ReasoningDelta) -> None:
        self.open_reasoning.append(delta.text)
        if delta.signature is not None or delta.redacted:
            self.close_reasoning(delta.signature, redacted=delta.redacted)

    def close_reasoning(self, signature: str | None = None, *, redacted: bool = False) -> None:
        if self.open_reasoning or signature is not None:
            text = "".join(self.open_reasoning)
            self.reasoning.append(ReasoningPart(text=text, signature=signature, redacted=redacted))
            self.open_reasoning = []

    def parts(self) -> list[ContentPart]:
        self.close_reasoning()
        parts: list[ContentPart] = list(self.reasoning)
        text = "".join(self.text)
        if text or not self.tool_calls:
            parts.append(TextPart(text=text))
        parts.extend(
            ToolCallPart(id=call.id, name=call.name, args=call.args) for call in self.tool_calls
        )
        return parts


class TurnRunner:
    """Runs one turn for a session; ``usage`` is readable while it runs (for aborts)."""

    def __init__(self, plan: TurnPlan, scope: SessionScope, governor: CostGovernor) -> None:
        self._plan = plan
        self._scope = scope
        self._governor = governor
        self._calls = TokenUsage()
        self.last_sequence = 0
        self.last_input_tokens: int | None = None
        self.window = TurnWindow(
            scope,
            governor,
            chain=plan.chain,
            context_window=plan.context_window,
            output_reserve=plan.output_reserve,
            threshold=plan.compact_threshold,
        )

    @property
    def usage(self) -> TokenUsage:
        """What the turn's calls spent so far, its compaction summaries included."""
        return self._calls.plus(self.window.spend.usage)

    async def run(self) -> TurnResult:
        """Run model calls and tool rounds until the model answers with final text."""
        plan = self._plan
        view = TurnView.of_history(plan.history, plan.user_sequence)
        tool_rounds = 0
        retried_overflow = False
        while True:
            view = await self.window.fit(view, self._request)
            request = self._request(view.messages())
            try:
                reply = await self._call_model(request)
            except CallRefused as refused:
                return self._failed(refused.error)
            if reply.error is not None:
                if reply.error.kind == "context_length" and not reply.error.partial:
                    if not retried_overflow:
                        # The estimate was wrong: correct it, compact, and try once more.
                        self.window.observe_overflow(request, reply.error)
                        retried_overflow = True
                        continue
                    return self._failed(_still_too_long(reply.error))
                return self._failed(turn_error_from(reply.error))
            retried_overflow = False
            self.window.observe_usage(request, reply.input_tokens)
            if reply.tool_calls and tool_rounds >= plan.max_tool_turns:
                return self._failed(
                    TurnError(
                        code="turn_limit",
                        message=(
                            f"The agent asked for more than {plan.max_tool_turns} rounds of "
                            "tool calls in one turn; stopped."
                        ),
                    )
                )
            parts = reply.parts()
            asked = await self._persist(
                "assistant",
                parts,
                model_id=reply.model,
                usage=reply.spend.usage,
                cost_microcents=reply.spend.cost_microcents,
            )
            view.add(LlmMessage(role="assistant", content=tuple(parts)), self.last_sequence)
            if not reply.tool_calls:
                return self._completed(reply)
            tool_rounds += 1
            # One tool message per round, as history projects it: every result first, then
            # any media the tools returned (providers want the results right after the calls).
            answered: list[ContentPart] = []
            for call in reply.tool_calls:
                parts = await self._run_tool(call)
                await self._persist("tool", parts, parent_message_id=asked)
                answered.extend(parts)
            answered.sort(key=lambda part: not isinstance(part, ToolResultPart))
            view.add(LlmMessage(role="tool", content=tuple(answered)), self.last_sequence)

    def _request(self, messages: Sequence[LlmMessage]) -> LlmRequest:
        plan = self._plan
        return LlmRequest(
            model=plan.chain[0].model,
            system=plan.system,
            messages=tuple(messages),
            tools=tuple(plan.tools),
            temperature=plan.temperature,
            max_tokens=plan.max_tokens,
        )

    async def _call_model(self, request: LlmRequest) -> _ModelReply:
        """Stream one call (every attempt cap-checked first); raises :class:`CallRefused`."""
        reply = _ModelReply(model=request.model)
        emit = self._scope.emit
        loop = asyncio.get_running_loop()
        # A fast stream can be fully buffered, so reading it never suspends: yield at least
        # every YIELD_EVERY_S so the event bus delivers while the model streams. A paced
        # stream suspends on every read anyway; a burst in between goes out coalesced (§3).
        due = loop.time() + YIELD_EVERY_S
        spent = reply.spend
        try:
            async for item in stream_priced(self._governor, self._plan.chain, request, spent):
                if isinstance(item, TextDelta):
                    reply.text.append(item.text)
                    emit(AgentToken(token=item.text, model=reply.model))
                    if loop.time() >= due:
                        await asyncio.sleep(0)
                        due = loop.time() + YIELD_EVERY_S
                elif isinstance(item, ReasoningDelta):
                    reply.add_reasoning(item)
                    if item.text:
                        emit(AgentReasoning(text=item.text, model=reply.model))
                    if loop.time() >= due:
                        await asyncio.sleep(0)
                        due = loop.time() + YIELD_EVERY_S
                elif isinstance(item, ToolCallEnd):
                    reply.tool_calls.append(item)
                elif isinstance(item, StopChunk):
                    reply.stop_reason = item.stop_reason
                    reply.input_tokens = item.usage.input_tokens
                    self.last_input_tokens = item.usage.input_tokens
                elif isinstance(item, ErrorChunk):
                    reply.error = item.error
                elif isinstance(item, AttemptStarted):
                    reply.model = item.model
        finally:
            # Spent even when the call was refused part-way or the turn aborted meanwhile.
            self._calls = self._calls.plus(spent.usage)
        return reply

    async def _run_tool(self, call: ToolCallEnd) -> list[ContentPart]:
        """The tool message's parts: the result, then any media the tool returned."""
        if call.args_error is not None:
            return [
                ToolResultPart(
                    tool_call_id=call.id,
                    result=f"The arguments for {call.name} were not valid JSON: {call.args_error}",
                    is_error=True,
                )
            ]
        answer = await self._scope.tools.dispatch(
            ToolCallPart(id=call.id, name=call.name, args=call.args), self._plan.tool_context
        )
        return answer.parts()

    async def _persist(
        self,
        role: Literal["assistant", "tool"],
        parts: Sequence[ContentPart],
        *,
        model_id: str | None = None,
        usage: TokenUsage | None = None,
        cost_microcents: int | None = None,
        parent_message_id: str | None = None,
    ) -> str:
        """Commit one message; returns its id."""
        session_id = self._scope.session_id
        durable = de_inline(parts, self._scope.media)
        # The durable form drops reasoning signatures; they are kept beside it (§5).
        signatures = [part.signature for part in parts if isinstance(part, ReasoningPart)]

        def append(s: SessionStore) -> SessionMessage:
            message = s.append_message(
                session_id,
                role,
                durable,
                model_id=model_id,
                token_usage=usage,
                cost_microcents=cost_microcents,
                parent_message_id=parent_message_id,
                agent_slug=self._plan.agent_slug,  # the agent is the author of both roles
            )
            s.keep_reasoning_signatures(message.id, signatures)
            return message

        message = await self._scope.store.run(append)
        self.last_sequence = message.sequence_number
        return message.id

    def _failed(self, error: TurnError) -> TurnResult:
        return TurnResult(
            stop_reason="error",
            tokens_used=self.usage,
            error=error,
            last_sequence=self.last_sequence,
        )

    def _completed(self, reply: _ModelReply) -> TurnResult:
        stop: StopReason = reply.stop_reason or "stop"
        error = None
        if stop == "content_filter":
            error = TurnError(
                code="content_filter", message="The provider stopped the answer by content policy."
            )
        return TurnResult(
            stop_reason=stop,
            tokens_used=self.usage,
            error=error,
            text="".join(reply.text),
            last_sequence=self.last_sequence,
        )
