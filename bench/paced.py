"""A loopback OpenAI-compatible provider that streams tokens at a set rate and notes each write.

Realistic providers send 50 to 1,000 tokens per second; a benchmark that streams as fast as
the socket takes bytes measures throughput, not the latency a user sees. :class:`PacedProvider`
is a :class:`~relavium_lsp.testing.loopback.LoopbackServer` responder: each request gets one
streamed completion of ``tokens`` text deltas (``"t0 "``, ``"t1 "``, …) written on a fixed
schedule, and the moment each delta is handed to the socket is recorded in ``writes`` — the
start of a per-token latency measured wherever the token is finally read (a bus subscriber, an
LSP client). Token texts are unique within a turn, so a reader that receives several deltas
coalesced into one piece can still match each one (:func:`token_numbers`).

``time.perf_counter`` is ``CLOCK_MONOTONIC`` on Linux, shared by every process on the machine,
so a reader in another process can compare its own ``perf_counter`` readings with these.
"""

from __future__ import annotations

import re
import statistics
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from relavium_lsp.testing.loopback import ReceivedRequest, ScriptedResponse
from relavium_lsp.testing.wire_scripts import SSE_HEADERS, openai_events

_TOKEN = re.compile(r"t(\d+) ")
# The per-turn overhead goal (send → the provider has the request, p99), for the engine and
# the LSP rows alike: a provider's first token takes 300-2,000 ms, and a 2-core VM's
# scheduler alone moves this by several milliseconds.
PER_TURN_GOAL_MS = 25.0


def token_numbers(text: str) -> list[int]:
    """The token numbers in a (possibly coalesced) piece of streamed text."""
    return [int(number) for number in _TOKEN.findall(text)]


def percentile(values: list[float], fraction: float) -> float:
    """The ``fraction`` quantile (nearest rank, no interpolation); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


@dataclass
class Turn:
    """One planned response: how many tokens, at what rate (``None``: as fast as possible)."""

    tokens: int
    rate: float | None
    arrived: float = 0.0  # when the provider received the request
    writes: dict[int, float] = field(default_factory=dict)  # token number → write time
    finished: threading.Event = field(default_factory=threading.Event)


class PacedProvider:
    """The responder; call :meth:`plan` before each request the server will receive."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._planned: list[Turn] = []
        self.turns: list[Turn] = []

    def plan(self, tokens: int, rate: float | None) -> Turn:
        """Queue the next response; the returned :class:`Turn` fills in as it streams."""
        turn = Turn(tokens=tokens, rate=rate)
        with self._lock:
            self._planned.append(turn)
        return turn

    def __call__(self, request: ReceivedRequest) -> ScriptedResponse:
        arrived = time.perf_counter()
        with self._lock:
            turn = self._planned.pop(0) if self._planned else Turn(tokens=1, rate=None)
        turn.arrived = arrived
        self.turns.append(turn)
        return ScriptedResponse(headers=SSE_HEADERS, body=self._body(turn))

    @staticmethod
    def _body(turn: Turn) -> Iterator[bytes]:
        pieces = [f"t{number} " for number in range(turn.tokens)]
        events = openai_events(text=pieces, usage=(10, turn.tokens))
        yield events[0]  # the role chunk
        started = time.perf_counter()
        for number, event in enumerate(events[1 : 1 + turn.tokens]):
            if turn.rate is not None:
                # Absolute deadlines, so a late write does not push every later one back.
                delay = started + number / turn.rate - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)  # the loopback thread's schedule, not a sync point
            turn.writes[number] = time.perf_counter()
            yield event
        yield b"".join(events[1 + turn.tokens :])
        turn.finished.set()


@dataclass
class Latencies:
    """Per-token latencies (seconds) from provider write to a reader's receipt."""

    values: list[float] = field(default_factory=list)

    def record(self, turn: Turn, text: str, received: float) -> None:
        """Note the tokens in ``text`` as received at ``received``."""
        for number in token_numbers(text):
            written = turn.writes.get(number)
            if written is not None:
                self.values.append(received - written)

    def p(self, fraction: float) -> float:
        """A quantile in milliseconds."""
        return percentile(self.values, fraction) * 1000

    def median_ms(self) -> float:
        """The median in milliseconds."""
        return statistics.median(self.values) * 1000 if self.values else float("nan")
