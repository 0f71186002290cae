"""What the two SSE decoders share: bytes in, event data out, handed to ``_events``.

A decoder holds its response's state (``state``, whose ``usage`` is what was reported so
far), the SSE stream (with the fast bytes-level path unless ``fast_sse=False``) and the JSON
decoder (``loads``; the tests pass the standard library's to prove both paths agree).
Subclasses say how to start a state, what event data becomes, and how a body ends.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Generic, Protocol, TypeVar

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.json_codec import Loads, loads
from relavium_lsp.llm.seam import LlmChunk
from relavium_lsp.llm.sse import EventData, SseStream


class _Reports(Protocol):
    @property
    def usage(self) -> TokenUsage: ...


State = TypeVar("State", bound=_Reports)


class EventStreamDecoder(ABC, Generic[State]):
    """Base of the SSE decoders (see the module docstring and :class:`StreamDecoder`)."""

    def __init__(
        self,
        provider_id: str,
        secret: str | None,
        *,
        loads: Loads = loads,
        fast_sse: bool = True,
    ) -> None:
        self._provider_id = provider_id
        self._secret = secret
        self._loads = loads
        self._fast = fast_sse
        self._sse = SseStream(fast=fast_sse)
        self.state = self._new_state()

    @abstractmethod
    def _new_state(self) -> State:
        """A fresh per-response state."""

    @abstractmethod
    def _events(self, events: list[EventData]) -> list[LlmChunk]:
        """The chunks these events make."""

    @property
    def usage(self) -> TokenUsage:
        """Tokens reported so far."""
        return self.state.usage

    def feed(self, data: bytes) -> list[LlmChunk]:
        """The chunks these bytes complete."""
        return self._events(self._sse.feed_data(data))

    def _remaining(self) -> list[LlmChunk]:
        """The chunks of whatever the body's unterminated end completes."""
        return self._events(self._sse.finish_data())
