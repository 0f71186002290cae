"""Try the primary model, then each fallback, without ever switching models mid-answer.

:func:`stream_with_fallback` yields the chunks of the attempt that answers, framed by
:class:`AttemptStarted` (so the caller knows which model produced them) and, for every
attempt that was abandoned, :class:`AttemptFailed`. The rules:

- an entry is tried up to ``max_attempts`` times; a *retryable* error (rate limit, overload,
  timeout, transport) moves to the next attempt or entry;
- a *fatal* error (auth, bad request, content filter, …) ends the chain with that error;
- once an attempt has yielded any text, reasoning or tool chunk, a later error ends the
  chain too — the user has already seen that model's tokens;
- when every attempt fails, the last error ends the chain;
- ``before_attempt``, when given, is awaited before every attempt's request is sent (the
  engine's cost cap, ``engine/model_calls.py``); whatever it raises ends the chain there,
  before anything goes out.

Usage is reported exactly once per attempt: in its :class:`AttemptFailed` if it was
abandoned, else in the final :class:`StopChunk` / :class:`ErrorChunk`. Pricing each of those
with the model named by the preceding :class:`AttemptStarted` counts every token spent.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmChunk,
    LlmError,
    LlmRequest,
    Provider,
    SeamModel,
    StopChunk,
)
from relavium_lsp.llm.streams import close_stream

_MAX_RETRY_DELAY_S = 8.0


@dataclass(frozen=True)
class ChainEntry:
    """One model to try, on one provider."""

    provider: Provider
    model: str
    max_attempts: int = 1


class AttemptStarted(SeamModel):
    """A call to ``model`` on ``provider_id`` begins (attempt numbers start at 1)."""

    type: Literal["attempt_started"] = "attempt_started"
    model: str
    provider_id: str
    attempt: int = 1


class AttemptFailed(SeamModel):
    """That call failed with a retryable error before showing anything; the chain moves on."""

    type: Literal["attempt_failed"] = "attempt_failed"
    model: str
    provider_id: str
    error: LlmError
    usage: TokenUsage
    attempt: int = 1


ChainItem = LlmChunk | AttemptStarted | AttemptFailed
RetryDelay = Callable[[LlmError, int], float]
Sleep = Callable[[float], Awaitable[None]]
# Awaited with the entry and the request about to be sent to it; raises to refuse the call.
AttemptGate = Callable[[ChainEntry, LlmRequest], Awaitable[None]]


def default_retry_delay(error: LlmError, attempt: int) -> float:
    """Seconds before retrying the *same* entry: the server's hint, else 0.5 s doubling."""
    if error.retry_after_s is not None:
        return min(error.retry_after_s, _MAX_RETRY_DELAY_S)
    return min(0.5 * float(2 ** (attempt - 1)), _MAX_RETRY_DELAY_S)


def _visible(chunk: LlmChunk) -> bool:
    return not isinstance(chunk, StopChunk | ErrorChunk)


async def stream_with_fallback(
    entries: Sequence[ChainEntry],
    request: LlmRequest,
    *,
    retry_delay: RetryDelay = default_retry_delay,
    sleep: Sleep = asyncio.sleep,
    before_attempt: AttemptGate | None = None,
) -> AsyncIterator[ChainItem]:
    """Stream ``request`` through the chain (``request.model`` is replaced per entry)."""
    if not entries:
        message = "no model is configured for this agent"
        yield ErrorChunk(error=LlmError(kind="bad_request", message=message))
        return
    last_failure: ErrorChunk | None = None
    for entry_number, entry in enumerate(entries):
        attempts = max(1, entry.max_attempts)
        for attempt in range(1, attempts + 1):
            if attempt > 1 and last_failure is not None:
                delay = retry_delay(last_failure.error, attempt - 1)
                if delay > 0:
                    await sleep(delay)
            provider_id = entry.provider.provider_id
            call = request.model_copy(update={"model": entry.model})
            if before_attempt is not None:
                await before_attempt(entry, call)
            yield AttemptStarted(model=entry.model, provider_id=provider_id, attempt=attempt)
            shown = False
            failure: ErrorChunk | None = None
            chunks = entry.provider.stream(call)
            try:
                async for chunk in chunks:
                    if isinstance(chunk, StopChunk):
                        yield chunk
                        async for _ in chunks:
                            pass  # lets the adapter finish reading, so its connection is reused
                        return
                    if isinstance(chunk, ErrorChunk):
                        failure = chunk
                        break
                    shown = shown or _visible(chunk)
                    yield chunk
            finally:
                await close_stream(chunks)
            if failure is None:
                failure = ErrorChunk(
                    error=LlmError(
                        kind="transport",
                        message=f"{provider_id}: the stream ended without a result",
                    )
                )
            is_last = entry_number == len(entries) - 1 and attempt == attempts
            if shown or not failure.error.retryable or is_last:
                yield failure
                return
            yield AttemptFailed(
                model=entry.model,
                provider_id=provider_id,
                error=failure.error,
                usage=failure.usage,
                attempt=attempt,
            )
            last_failure = failure
