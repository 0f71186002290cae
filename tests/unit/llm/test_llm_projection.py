from __future__ import annotations

import base64

import pytest

from relavium_lsp.contracts.content import (
    Base64Source,
    DurableMediaPart,
    DurableReasoningPart,
    HandleSource,
    MediaPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.session import CompactionMarker, InterruptionMarker, SessionMessage
from relavium_lsp.llm.projection import (
    INTERRUPTED_RESULT,
    SUMMARY_PREFIX,
    TRIMMED_NOTE,
    project_messages,
)
from relavium_lsp.llm.seam import LlmMessage
from relavium_lsp.store.media import MediaStore


@pytest.fixture
def media(tmp_path):
    return MediaStore(tmp_path / "media")


class Log:
    def __init__(self) -> None:
        self.messages: list[SessionMessage] = []

    def add(self, role, *parts, **fields) -> SessionMessage:
        sequence = len(self.messages) + 1
        message = SessionMessage(
            id=f"m{sequence}",
            session_id="s",
            sequence_number=sequence,
            role=role,
            content=list(parts),
            timestamp="2026-01-01T00:00:00Z",
            **fields,
        )
        self.messages.append(message)
        return message


def texts(message: LlmMessage) -> list[str]:
    return [p.text for p in message.content if isinstance(p, TextPart)]


def test_plain_conversation_round_trips(media):
    log = Log()
    log.add("user", TextPart(text="hi"))
    log.add("assistant", DurableReasoningPart(text="hmm"), TextPart(text="hello"))
    projected = project_messages(log.messages, media)
    assert projected == (
        LlmMessage(role="user", content=(TextPart(text="hi"),)),
        LlmMessage(role="assistant", content=(ReasoningPart(text="hmm"), TextPart(text="hello"))),
    )


def test_compaction_marker_becomes_leading_summary_and_hides_older_messages(media):
    log = Log()
    log.add("user", TextPart(text="old question"))
    log.add("assistant", TextPart(text="old answer"))
    log.add("user", TextPart(text="kept question"))
    log.add("assistant", TextPart(text="kept answer"))
    log.add(
        "system",
        TextPart(text="first summary"),
        compaction=CompactionMarker(dropped_through_sequence=1),
    )
    log.add(
        "system",
        TextPart(text="We discussed X."),
        compaction=CompactionMarker(dropped_through_sequence=2, mode="summarize"),
    )
    log.add("user", TextPart(text="new"))
    projected = project_messages(list(reversed(log.messages)), media)  # order does not matter
    assert texts(projected[0]) == [SUMMARY_PREFIX + "We discussed X."]
    assert projected[0].role == "user"
    assert [texts(m)[0] for m in projected[1:]] == ["kept question", "kept answer", "new"]


def test_trim_marker_without_text_leaves_a_note(media):
    log = Log()
    log.add("user", TextPart(text="dropped"))
    log.add("system", compaction=CompactionMarker(dropped_through_sequence=1))
    log.add("user", TextPart(text="kept"))
    projected = project_messages(log.messages, media)
    assert texts(projected[0]) == [TRIMMED_NOTE]
    assert texts(projected[1]) == ["kept"]


def test_interruption_marker_and_other_system_rows_are_dropped(media):
    log = Log()
    log.add("system", TextPart(text="internal"))
    log.add("user", TextPart(text="q"))
    log.add(
        "system",
        TextPart(text="crashed"),
        interruption=InterruptionMarker(interrupted_after_sequence=2),
    )
    projected = project_messages(log.messages, media)
    assert [m.role for m in projected] == ["user"]


def test_dangling_tool_call_gets_a_synthetic_error_result(media):
    log = Log()
    log.add("user", TextPart(text="do it"))
    log.add(
        "assistant",
        ToolCallPart(id="a", name="read_file", args={"path": "x"}),
        ToolCallPart(id="b", name="write_file", args={"path": "y", "content": ""}),
    )
    log.add("tool", ToolResultPart(tool_call_id="a", result="contents"))
    # The process died before b's result; the user then wrote again.
    log.add("user", TextPart(text="hello?"))
    projected = project_messages(log.messages, media)
    assert [m.role for m in projected] == ["user", "assistant", "tool", "user"]
    assert projected[2].content == (
        ToolResultPart(tool_call_id="a", result="contents"),
        ToolResultPart(tool_call_id="b", result=INTERRUPTED_RESULT, is_error=True),
    )


def test_results_are_ordered_like_calls_and_orphans_dropped(media):
    log = Log()
    log.add("tool", ToolResultPart(tool_call_id="gone", result="orphan at the window edge"))
    log.add("assistant", ToolCallPart(id="a", name="t"), ToolCallPart(id="b", name="t"))
    log.add("tool", ToolResultPart(tool_call_id="b", result="B"))
    log.add("tool", ToolResultPart(tool_call_id="zzz", result="unrelated"))
    log.add("tool", ToolResultPart(tool_call_id="a", result="A"))
    projected = project_messages(log.messages, media)
    assert [m.role for m in projected] == ["assistant", "tool"]
    assert [p.tool_call_id for p in projected[1].content] == ["a", "b"]


def test_media_handles_resolve_to_base64_and_missing_blobs_become_notes(media):
    data = b"\x89PNG bytes"
    handle = media.put(data)
    missing = "media://sha256-" + "0" * 64
    log = Log()
    log.add(
        "user",
        TextPart(text="see"),
        DurableMediaPart(
            mime_type="image/png", source=HandleSource(handle=handle), name="shot.png"
        ),
        DurableMediaPart(
            mime_type="image/png", source=HandleSource(handle=missing), name="lost.png"
        ),
    )
    (message,) = project_messages(log.messages, media)
    assert message.content[1] == MediaPart(
        mime_type="image/png",
        source=Base64Source(data=base64.b64encode(data).decode()),
        name="shot.png",
    )
    assert message.content[2] == TextPart(text="[attachment lost.png is no longer available]")


def test_in_flight_parts_replace_stored_ones_keeping_signatures(media):
    log = Log()
    log.add("user", TextPart(text="q"))
    stored = log.add(
        "assistant", DurableReasoningPart(text="think"), ToolCallPart(id="c", name="t")
    )
    log.add("tool", ToolResultPart(tool_call_id="c", result="r"))
    live = [ReasoningPart(text="think", signature="SIG"), ToolCallPart(id="c", name="t")]
    projected = project_messages(log.messages, media, in_flight={stored.id: live})
    assert projected[1].content[0] == ReasoningPart(text="think", signature="SIG")
    without = project_messages(log.messages, media)
    assert without[1].content[0] == ReasoningPart(text="think", signature=None)


def test_empty_messages_are_skipped(media):
    log = Log()
    log.add("user")
    log.add("assistant")
    log.add("user", TextPart(text="real"))
    assert [texts(m) for m in project_messages(log.messages, media)] == [["real"]]
