"""The stream guard's one-pass admission of a read that holds only text deltas.

A read of text deltas is admitted as it is and marks the response as delivered, exactly as
the chunk-by-chunk path would; an empty read changes nothing; any other chunk in the read
still goes through the chunk-by-chunk path (an open call, a final chunk ending the stream).
"""

from __future__ import annotations

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.http.stream_guard import StreamGuard
from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmError,
    StopChunk,
    TextDelta,
    ToolCallStart,
    new_text_delta,
)


def test_a_read_of_text_deltas_is_admitted_whole_and_marks_delivery():
    guard = StreamGuard()
    assert guard.admit([]) == [] and not guard.delivered
    texts = [new_text_delta("a"), TextDelta(text="b")]
    assert guard.admit(texts) is texts
    assert guard.delivered and not guard.ended


def test_other_chunks_in_a_read_take_the_careful_path():
    guard = StreamGuard()
    start = ToolCallStart(index=0, id="c", name="f")
    stop = StopChunk(stop_reason="stop", usage=TokenUsage())
    admitted = guard.admit([new_text_delta("a"), start, stop, new_text_delta("late")])
    assert [type(chunk).__name__ for chunk in admitted] == [
        "TextDelta", "ToolCallStart", "ToolCallEnd", "StopChunk"
    ]  # fmt: skip
    assert guard.ended and guard.admit([new_text_delta("after")]) == []


def test_an_error_after_text_is_not_retryable():
    guard = StreamGuard()
    guard.admit([new_text_delta("a")])
    error = ErrorChunk(error=LlmError(kind="transport", message="x"), usage=TokenUsage())
    (final,) = guard.admit([error])
    assert isinstance(final, ErrorChunk) and final.error.partial
