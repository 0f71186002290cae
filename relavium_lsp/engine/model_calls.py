"""Every provider call the engine makes, through one door: checked first, priced after.

A turn's call, an in-turn or between-turn compaction summary, an introspection pass and a
delegated child's calls all stream through :func:`stream_priced` (``docs/design.md`` §2.2):

- before each attempt's request is sent — the first model and every fallback attempt — the
  session's :class:`~relavium_lsp.engine.governor.CostGovernor` checks the cost cap with the
  request's estimated input, priced for the model that attempt asks (a pricier fallback is
  checked at its own price); a refusal raises :class:`CallRefused` before anything goes out,
  with the cap's ``on_exceed`` behaviour the same for every caller;
- every attempt's usage (answered, failed, or abandoned for the next model) is priced and
  recorded once, so the session's totals see it before the next check.

:func:`answer_text` is the same for a call whose only product is text (summaries, checkpoints).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from relavium_lsp.contracts.events import TokenUsage, TurnError
from relavium_lsp.engine.governor import CostGovernor
from relavium_lsp.llm.fallback import (
    AttemptFailed,
    AttemptStarted,
    ChainEntry,
    ChainItem,
    stream_with_fallback,
)
from relavium_lsp.llm.seam import ErrorChunk, LlmError, LlmRequest, StopChunk, TextDelta


class CallRefused(Exception):
    """The cost cap refused a call before it was sent (``error`` says why)."""

    def __init__(self, error: TurnError) -> None:
        super().__init__(error.message)
        self.error = error


class CallFailed(Exception):
    """The provider answered a text-only call with an error (after the fallback chain)."""

    def __init__(self, error: LlmError) -> None:
        super().__init__(error.message)
        self.error = error


@dataclass
class CallSpend:
    """What one logical call cost, its fallback attempts included."""

    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_microcents: int = 0


async def stream_priced(
    governor: CostGovernor,
    chain: Sequence[ChainEntry],
    request: LlmRequest,
    spend: CallSpend | None = None,
) -> AsyncIterator[ChainItem]:
    """Stream ``request`` through ``chain``, every attempt checked before and priced after.

    Raises :class:`CallRefused` when the cap refuses an attempt (nothing of it was sent).
    ``spend`` adds up what the call cost.
    """
    tally = spend if spend is not None else CallSpend()

    async def check(entry: ChainEntry, call: LlmRequest) -> None:
        refusal = await governor.check_before_call(call, provider_id=entry.provider.provider_id)
        if refusal is not None:
            raise CallRefused(refusal)

    model = request.model
    async for item in stream_with_fallback(chain, request, before_attempt=check):
        if isinstance(item, AttemptStarted):
            model = item.model
        elif isinstance(item, StopChunk | ErrorChunk):
            await _record(governor, tally, model, item.usage)
        elif isinstance(item, AttemptFailed):
            await _record(governor, tally, item.model, item.usage)
        yield item


async def answer_text(
    governor: CostGovernor,
    chain: Sequence[ChainEntry],
    request: LlmRequest,
    spend: CallSpend | None = None,
) -> str:
    """The model's whole text answer, stripped (possibly empty).

    Raises :class:`CallRefused` (the cap said no) or :class:`CallFailed` (the provider did).
    """
    pieces: list[str] = []
    async for item in stream_priced(governor, chain, request, spend):
        if isinstance(item, TextDelta):
            pieces.append(item.text)
        elif isinstance(item, ErrorChunk):
            raise CallFailed(item.error)
    return "".join(pieces).strip()


async def _record(governor: CostGovernor, tally: CallSpend, model: str, usage: TokenUsage) -> None:
    tally.usage = tally.usage.plus(usage)
    tally.cost_microcents += await governor.record(model, usage)
