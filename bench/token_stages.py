"""Where a token's latency goes inside the engine: per-stage timestamps for ``bench.engine``.

Measurement only — :func:`instrument` wraps two engine seams for the life of a benchmark
process (never in the product):

- ``adapter``: the turn receives the delta from the provider adapter (HTTP read, SSE cut,
  JSON decode done);
- ``queued``: the event bus's pump takes the batch holding the delta and starts persisting it;
- ``persisted``: the batch is committed to the durable event log and the pump is back on the
  event loop, about to deliver;

and the subscriber notes ``delivered``. With the provider's write time each token gets four
intervals, reported as rows: what the adapter costs, how long a delta waits for the pump,
the event log's round trip (the store's worker thread, one SQLCipher commit, two thread
hand-offs) and delivery.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from bench.paced import Turn, percentile, token_numbers
from bench.report import Row
from relavium_lsp.contracts.events import AgentToken, EventPayload, StampedEvent
from relavium_lsp.engine import bus as bus_module
from relavium_lsp.engine import turn as turn_module
from relavium_lsp.llm.seam import TextDelta

STAGES = ("write", "adapter", "queued", "persisted", "delivered")
LABELS = {
    "adapter": "provider write → adapter delta (HTTP, SSE, JSON)",
    "queued": "adapter delta → event bus pump starts the batch",
    "persisted": "event-log round trip (worker thread, commit, back on the loop)",
    "delivered": "persisted → subscriber",
}


class StageClock:
    """Per token number, the first time each stage saw it (``perf_counter`` seconds)."""

    def __init__(self) -> None:
        self.stamps: dict[int, dict[str, float]] = {}
        self.enabled = False

    def mark(self, text: str, stage: str) -> None:
        """Note every token in ``text`` as having reached ``stage`` now."""
        if not self.enabled:
            return
        now = time.perf_counter()
        for number in token_numbers(text):
            self.stamps.setdefault(number, {}).setdefault(stage, now)

    def mark_batch(self, batch: list[EventPayload], stage: str) -> None:
        """Note the tokens of a bus batch."""
        for payload in batch:
            if isinstance(payload, AgentToken):
                self.mark(payload.token, stage)

    def on_event(self, event: StampedEvent) -> None:
        """A bus subscriber: the ``delivered`` stage."""
        if isinstance(event.payload, AgentToken):
            self.mark(event.payload.token, "delivered")

    def intervals(self, turn: Turn) -> dict[str, list[float]]:
        """Per stage, the seconds each token spent getting there from the previous stage."""
        spent: dict[str, list[float]] = {stage: [] for stage in STAGES[1:]}
        for number, stamps in self.stamps.items():
            written = turn.writes.get(number)
            if written is None:
                continue
            times = {"write": written, **stamps}
            for before, after in itertools.pairwise(STAGES):
                if before in times and after in times:
                    spent[after].append(times[after] - times[before])
        return spent

    def rows(self, turn: Turn, rate: int) -> list[Row]:
        """One row per stage: its p99, next to its p50 as the anchor."""
        rows = []
        for stage, values in self.intervals(turn).items():
            rows.append(
                Row(
                    f"  stage at {rate:,} tok/s: {LABELS[stage]}, p99",
                    percentile(values, 0.99) * 1000,
                    "ms",
                    anchor="its p50",
                    anchor_value=percentile(values, 0.5) * 1000,
                )
            )
        return rows


def instrument(clock: StageClock) -> None:
    """Wrap the turn's stream and the bus's persist step to feed ``clock`` (this process)."""
    original_stream: Callable[..., AsyncIterator[Any]] = turn_module.stream_with_fallback

    async def timed_stream(*arguments: Any, **keywords: Any) -> AsyncIterator[Any]:
        async for item in original_stream(*arguments, **keywords):
            if isinstance(item, TextDelta):
                clock.mark(item.text, "adapter")
            yield item

    original_persist = bus_module.EventBus._persist

    async def timed_persist(
        self: bus_module.EventBus, session_id: str, batch: list[EventPayload]
    ) -> list[StampedEvent]:
        clock.mark_batch(batch, "queued")
        stamped = await original_persist(self, session_id, batch)
        clock.mark_batch(batch, "persisted")
        return stamped

    turn_module.stream_with_fallback = timed_stream  # type: ignore[assignment]
    bus_module.EventBus._persist = timed_persist  # type: ignore[method-assign]
