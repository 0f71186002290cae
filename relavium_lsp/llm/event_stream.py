"""What the two SSE decoders share: bytes in, event data out, handed to ``_events``.

A decoder holds its response's state (``state``, whose ``usage`` is what was reported so
far), the SSE stream (with the fast bytes-level path unless ``fast_sse=False``) and the JSON
decoder (``loads``; the tests pass the standard library's to prove both paths agree).
Subclasses say how to start a state, what event data becomes, and how a body ends.

On the fast path a decoder also learns its stream's text envelope from the first plain text
event its typed decoder reads (:meth:`EventStreamDecoder._learn`) and from then on lets
:class:`~relavium_lsp.llm.text_envelope.TextEnvelope` cut the text deltas at the front of
every read straight out of the bytes (:mod:`relavium_lsp.llm.text_envelope` says why that
reads exactly what the typed decoder would).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Generic, Protocol, TypeVar

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.json_codec import Loads, loads
from relavium_lsp.llm.seam import LlmChunk
from relavium_lsp.llm.sse import EventData, SseStream
from relavium_lsp.llm.text_envelope import MAX_LEARNED, TextEnvelope, TextOf, learn


class _Reports(Protocol):
    @property
    def usage(self) -> TokenUsage: ...


State = TypeVar("State", bound=_Reports)


class EventStreamDecoder(ABC, Generic[State]):
    """Base of the SSE decoders (see the module docstring and :class:`StreamDecoder`)."""

    # What a plain text event's SSE block holds before its data, and the typed decoder that
    # reads such an event's text (``None`` for any other event).
    _block_start: ClassVar[bytes]
    _text_of: ClassVar[TextOf]

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
        self._envelope: TextEnvelope | None = None
        self._learned = 0
        self.state = self._new_state()

    @abstractmethod
    def _new_state(self) -> State:
        """A fresh per-response state."""

    @abstractmethod
    def _events(self, events: list[EventData]) -> list[LlmChunk]:
        """The chunks these events make."""

    @abstractmethod
    def _ended(self) -> bool:
        """Whether the response is over (no event is read any more)."""

    def _took_text(self) -> None:
        """Note that the envelope path delivered text (for states that track it)."""

    @property
    def usage(self) -> TokenUsage:
        """Tokens reported so far."""
        return self.state.usage

    def feed(self, data: bytes) -> list[LlmChunk]:
        """The chunks these bytes complete."""
        envelope = self._envelope
        if envelope is None or self._ended():
            return self._events(self._sse.feed_data(data))
        texts: list[LlmChunk] = []
        events = self._sse.feed_data(data, lambda buffer: envelope.scan(buffer, texts))
        if not texts:
            return self._events(events)
        self._took_text()
        if events:
            texts.extend(self._events(events))
        return texts

    def _learn(self, data: bytes, text: str) -> None:
        """Learn the envelope of a plain text event the typed decoder read (see the module doc).

        Called for the first such event of a read; a stream whose envelope keeps changing
        stops being probed after :data:`~relavium_lsp.llm.text_envelope.MAX_LEARNED` tries.
        """
        envelope = self._envelope
        if self._learned >= MAX_LEARNED or (
            envelope is not None and envelope.matches(data, self._block_start)
        ):
            return
        self._learned += 1
        self._envelope = learn(data, text, self._block_start, type(self)._text_of)

    def _remaining(self) -> list[LlmChunk]:
        """The chunks of whatever the body's unterminated end completes."""
        return self._events(self._sse.finish_data())
