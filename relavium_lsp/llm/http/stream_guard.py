"""The seam's promises, held for any stream a decoder produces.

Decoders translate what a provider sent; providers send truncated, reordered and
half-finished streams. :class:`StreamGuard` sits between a decoder and the engine and makes
three promises true whatever came over the wire:

- every started tool call ends: a call still open when the stream stops or fails gets a
  :class:`ToolCallEnd` with an ``args_error``, so the engine hands it back to the model as a
  failed call instead of losing it;
- exactly one final chunk (:class:`StopChunk` or :class:`ErrorChunk`), and nothing after it;
- an error is retryable only when nothing billable was delivered: once text, reasoning, a
  or a tool call reached the caller, the error is marked ``partial`` so the
  fallback chain does not buy the answer a second time.
"""

from __future__ import annotations

from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmChunk,
    ReasoningDelta,
    StopChunk,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

UNFINISHED_CALL = "the response ended before this tool call's arguments were complete"
_TEXT_ONLY = {TextDelta}


class StreamGuard:
    """Tracks one response's open tool calls and whether anything billable was delivered."""

    __slots__ = ("_open", "delivered", "ended")

    def __init__(self) -> None:
        self._open: dict[int, ToolCallStart] = {}
        self.delivered = False
        self.ended = False

    def admit(self, chunks: list[LlmChunk]) -> list[LlmChunk]:
        """The chunks to pass on: everything up to and including the first final one."""
        if self.ended:
            return []
        if set(map(type, chunks)) == _TEXT_ONLY:  # nearly every read: one pass in C
            self.delivered = True
            return chunks
        # Exact type checks and a local flag: this runs once per delta.
        delivered = self.delivered
        for position, chunk in enumerate(chunks):
            kind = type(chunk)
            if kind is TextDelta or kind is ReasoningDelta or kind is ToolCallDelta:
                delivered = True
            elif isinstance(chunk, ToolCallStart):
                delivered = True
                self._open[chunk.index] = chunk
            elif isinstance(chunk, ToolCallEnd):
                delivered = True
                self._open.pop(chunk.index, None)
            elif isinstance(chunk, StopChunk | ErrorChunk):
                self.delivered = delivered
                return [*chunks[:position], *self.final(chunk)]
        self.delivered = delivered
        return chunks

    def final(self, chunk: StopChunk | ErrorChunk) -> list[LlmChunk]:
        """Close every open call, then the final chunk (an error marked partial if due)."""
        if self.ended:
            return []
        self.ended = True
        closing: list[LlmChunk] = [
            ToolCallEnd(index=start.index, id=start.id, name=start.name, args_error=UNFINISHED_CALL)
            for start in self._open.values()
        ]
        self._open.clear()
        if isinstance(chunk, ErrorChunk) and not chunk.error.partial:
            if self.delivered or closing:
                chunk = chunk.model_copy(
                    update={"error": chunk.error.model_copy(update={"partial": True})}
                )
        closing.append(chunk)
        return closing
