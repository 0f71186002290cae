"""Where a token's latency goes inside the engine: per-stage timestamps for ``bench.engine``.

Measurement only — :func:`instrument` wraps engine seams for the life of a benchmark process
(never in the product):

- ``adapter``: the turn receives the delta from the provider adapter (HTTP read, SSE cut,
  JSON decode done);
- ``persisted``: the event-log commit holding the token is done and the pump is back on the
  event loop;

and the subscriber notes ``delivered``. While a turn holds its session's lease the bus numbers
the token in memory and delivers it at once; the commit follows, write-behind (docs/design.md
§3.1). So each token gets two intervals on its path — what the adapter costs, and adapter →
subscriber (stamping in memory and delivery) — and one off it: delivered → written to the
event log (the store's worker thread, one SQLCipher commit, two thread hand-offs), which no
longer delays the token.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from bench.paced import Turn, percentile, token_numbers
from bench.report import Row
from relavium_lsp.contracts.events import AgentToken, EventPayload, StampedEvent
from relavium_lsp.engine import bus as bus_module
from relavium_lsp.engine import model_calls as calls_module
from relavium_lsp.llm.seam import TextDelta

# (from, to, label): the token's path first, then what happens behind it.
INTERVALS = (
    ("write", "adapter", "provider write → adapter delta (HTTP, SSE, JSON)"),
    ("adapter", "delivered", "adapter delta → subscriber (numbered in memory, delivered)"),
    ("delivered", "persisted", "off the token's path: delivered → written behind to the log"),
)


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
        """Per interval label, the seconds each token spent in it."""
        spent: dict[str, list[float]] = {label: [] for _before, _after, label in INTERVALS}
        for number, stamps in self.stamps.items():
            written = turn.writes.get(number)
            if written is None:
                continue
            times = {"write": written, **stamps}
            for before, after, label in INTERVALS:
                if before in times and after in times:
                    spent[label].append(times[after] - times[before])
        return spent

    def rows(self, turn: Turn, rate: int) -> list[Row]:
        """One row per interval: its p99, next to its p50 as the anchor."""
        rows = []
        for label, values in self.intervals(turn).items():
            if not values:
                continue
            rows.append(
                Row(
                    f"  stage at {rate:,} tok/s: {label}, p99",
                    percentile(values, 0.99) * 1000,
                    "ms",
                    anchor="its p50",
                    anchor_value=percentile(values, 0.5) * 1000,
                )
            )
        return rows


def instrument(clock: StageClock) -> None:
    """Wrap the turn's stream and the bus's persist step to feed ``clock`` (this process)."""
    original_stream: Callable[..., AsyncIterator[Any]] = calls_module.stream_with_fallback

    async def timed_stream(*arguments: Any, **keywords: Any) -> AsyncIterator[Any]:
        async for item in original_stream(*arguments, **keywords):
            if isinstance(item, TextDelta):
                clock.mark(item.text, "adapter")
            yield item

    original_persist = bus_module.EventBus._persist

    async def timed_persist(
        self: bus_module.EventBus, session_id: str, batch: list[EventPayload], *rest: Any
    ) -> list[StampedEvent]:
        # ``*rest``: whatever else the bus passes its persist step (the wrapper only times it).
        stamped = await original_persist(self, session_id, batch, *rest)
        clock.mark_batch(batch, "persisted")
        return stamped

    original_write = bus_module.EventBus._write_numbered

    async def timed_write(self: bus_module.EventBus, session_id: str, channel: Any) -> None:
        batch = [event.payload for event in channel.numbered]
        await original_write(self, session_id, channel)
        clock.mark_batch(batch, "persisted")

    calls_module.stream_with_fallback = timed_stream  # type: ignore[assignment]
    bus_module.EventBus._persist = timed_persist  # type: ignore[method-assign]
    bus_module.EventBus._write_numbered = timed_write  # type: ignore[method-assign]
