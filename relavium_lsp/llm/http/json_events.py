"""A decoder for streams of JSON events in SSE (``data: {…}``): bytes in, one event at a time.

The Responses and Gemini adapters use it. An event that carries nothing but text (nearly
every one) is read by the subclass's typed decoder (:meth:`JsonEventDecoder._text`) and
becomes a :class:`TextDelta` at once. Every other ``data`` payload is parsed (``loads``) and
handed to :meth:`JsonEventDecoder._event`; one that is not a JSON object ends the response
with an ``unknown`` error, and so does a body that ends before the subclass saw the end
(:meth:`JsonEventDecoder._at_end`). A terminal chunk is produced at most once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.http.json_codec import Loads, loads
from relavium_lsp.llm.http.sse import EventData, SseStream
from relavium_lsp.llm.seam import ErrorChunk, LlmChunk, LlmError, StopChunk, new_text_delta

INCOMPLETE = "the stream ended before the response was complete"


class JsonEventDecoder(ABC):
    """SSE JSON events → chunks (see the module docstring and ``StreamDecoder``)."""

    def __init__(self, provider_id: str, secret: str | None, *, loads: Loads = loads) -> None:
        self._provider_id = provider_id
        self._secret = secret
        self._loads = loads
        self._sse = SseStream()
        self.ended = False

    @property
    @abstractmethod
    def usage(self) -> TokenUsage:
        """Tokens reported so far."""

    @abstractmethod
    def _text(self, data: EventData) -> str | None:
        """The text of an event that holds only text, else ``None`` (the general path)."""

    @abstractmethod
    def _event(self, payload: dict[str, Any]) -> list[LlmChunk]:
        """The chunks one event makes (ending with a terminal chunk when it ends the answer)."""

    def _at_end(self) -> list[LlmChunk]:
        """The closing chunks when the body ends without a terminal event."""
        return [self.failure("transport", INCOMPLETE)]

    def failure(self, kind: Any, message: str) -> ErrorChunk:
        """An error chunk with the usage reported so far."""
        return ErrorChunk(error=LlmError(kind=kind, message=message), usage=self.usage)

    def feed(self, data: bytes) -> list[LlmChunk]:
        """The chunks these bytes complete."""
        if self.ended:
            return []
        return self._events(self._sse.feed_data(data))

    def finish(self) -> list[LlmChunk]:
        """At end of body: whatever the rest completes, then the closing chunks."""
        if self.ended:
            return []
        chunks = self._events(self._sse.finish_data())
        if not self.ended:
            self.ended = True
            chunks.extend(self._at_end())
        return chunks

    def _events(self, events: Sequence[EventData]) -> list[LlmChunk]:
        chunks: list[LlmChunk] = []
        text_of = self._text
        for data in events:
            if self.ended:
                break
            text = text_of(data)
            if text is not None:  # the common case, without the general dispatch
                if text:
                    chunks.append(new_text_delta(text))
            elif data != b"[DONE]" and data != "[DONE]":
                chunks.extend(self.payload(data))
        return chunks

    def payload(self, data: EventData) -> list[LlmChunk]:
        """The chunks of one event's data (bytes or text)."""
        try:
            payload = self._loads(data)
        except ValueError:
            payload = None
        if type(payload) is not dict:
            self.ended = True
            return [self.failure("unknown", "the provider sent a malformed stream event")]
        produced = self._event(payload)
        if produced and isinstance(produced[-1], StopChunk | ErrorChunk):
            self.ended = True
        return produced
