"""Engine events → session/update, settled turns → stop reasons, prompt → title."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
)

from relavium_lsp.acp.tool_calls import CallBook, CallRecord, describe_call
from relavium_lsp.acp.updates import EventMapper, prompt_response, title_from_prompt
from relavium_lsp.contracts.events import (
    AgentReasoning,
    AgentToken,
    AgentToolCall,
    AgentToolResult,
    CostUpdated,
    EventPayload,
    SessionStarted,
    StampedEvent,
    TokenUsage,
    TurnCompleted,
    TurnError,
    TurnResult,
)
from relavium_lsp.contracts.session import SessionContext

SID = "s-1"


def stamp(payload: EventPayload, sequence: int = 1) -> StampedEvent:
    return StampedEvent(
        session_id=SID,
        sequence_number=sequence,
        timestamp="2025-01-01T00:00:00.000Z",
        payload=payload,
    )


def mapper(book: CallBook | None = None, window: int | None = 128_000) -> EventMapper:
    return EventMapper(book or CallBook(), lambda session_id: window)


def test_text_and_reasoning_become_chunks() -> None:
    events = mapper()
    (message,) = events.map(stamp(AgentToken(token="Hel", model="m")))
    assert isinstance(message, AgentMessageChunk) and message.content.text == "Hel"
    (thought,) = events.map(stamp(AgentReasoning(text="hmm", model="m")))
    assert isinstance(thought, AgentThoughtChunk) and thought.content.text == "hmm"
    assert events.map(stamp(AgentToken(token="", model="m"))) == []
    context = SessionContext(working_dir="/w")
    assert events.map(stamp(SessionStarted(agent_ref="a", model="m", context=context))) == []


def test_a_tool_call_without_a_record_is_described_from_its_sanitized_input() -> None:
    (start,) = mapper().map(
        stamp(
            AgentToolCall(
                tool_id="run_command", call_id="c", tool_input={"command": ["ls", "-l"]}, model="m"
            )
        )
    )
    assert isinstance(start, ToolCallStart)
    assert (start.kind, start.title, start.status) == ("execute", "Run ls -l", "pending")
    assert start.raw_input == {"command": ["ls", "-l"]}


def test_a_tool_result_walks_the_status_lifecycle_and_carries_the_diff(tmp_path: Path) -> None:
    book = CallBook()
    target = tmp_path / "a.py"
    diff = FileEditToolCallContent(type="diff", path=str(target), old_text="a", new_text="b")
    record = CallRecord(
        session_id=SID,
        call_id="w",
        tool="write_file",
        args={"path": "a.py", "content": "b"},
        description=describe_call("write_file", {"path": "a.py"}, None),
        diff=diff,
    )
    book.open(record)
    events = mapper(book)
    (start,) = events.map(
        stamp(AgentToolCall(tool_id="write_file", call_id="w", tool_input={}, model="m"))
    )
    assert isinstance(start, ToolCallStart) and start.kind == "edit"
    running, done = events.map(
        stamp(
            AgentToolResult(
                tool_id="write_file",
                call_id="w",
                success=True,
                output_summary="Created a.py",
                duration_ms=3,
            )
        )
    )
    assert isinstance(running, ToolCallProgress) and running.status == "in_progress"
    assert isinstance(done, ToolCallProgress) and done.status == "completed"
    assert done.content is not None
    assert done.content[0] == diff
    assert isinstance(done.content[1], ContentToolCallContent)
    assert done.raw_output == {"success": True, "durationMs": 3}
    assert len(book) == 0


def test_a_started_failed_call_sends_only_its_final_status() -> None:
    book = CallBook()
    book.open(
        CallRecord(
            session_id=SID,
            call_id="c",
            tool="read_file",
            args={},
            description=describe_call("read_file", {}, None),
            started=True,
        )
    )
    (failed,) = mapper(book).map(
        stamp(
            AgentToolResult(
                tool_id="read_file",
                call_id="c",
                success=False,
                output_summary="nope",
                duration_ms=1,
                error_code="tool_denied",
            )
        )
    )
    assert isinstance(failed, ToolCallProgress) and failed.status == "failed"
    assert failed.raw_output == {"success": False, "durationMs": 1, "errorCode": "tool_denied"}


def test_cost_becomes_a_usage_update_in_dollars() -> None:
    (usage,) = mapper(window=8_000).map(
        stamp(
            CostUpdated(
                model="m",
                input_tokens=100,
                output_tokens=20,
                cost_microcents=5_000_000,
                cumulative_cost_microcents=250_000_000,
                priced=True,
            )
        )
    )
    assert isinstance(usage, UsageUpdate)
    assert (usage.used, usage.size) == (120, 8_000)
    assert usage.cost is not None and usage.cost.amount == 2.5 and usage.cost.currency == "USD"
    (unpriced,) = mapper().map(
        stamp(
            CostUpdated(
                model="m",
                input_tokens=1,
                output_tokens=1,
                cost_microcents=0,
                cumulative_cost_microcents=0,
                priced=False,
            )
        )
    )
    assert isinstance(unpriced, UsageUpdate) and unpriced.cost is None


def test_turn_completed_forgets_the_sessions_calls() -> None:
    book = CallBook()
    book.open(
        CallRecord(
            session_id=SID,
            call_id="c",
            tool="x",
            args={},
            description=describe_call("x", {}, None),
        )
    )
    completed = TurnCompleted(stop_reason="aborted", tokens_used=TokenUsage())
    assert mapper(book).map(stamp(completed)) == []
    assert len(book) == 0


@pytest.mark.parametrize(
    ("stop_reason", "code", "expected"),
    [
        ("stop", None, "end_turn"),
        ("tool_use", None, "end_turn"),
        ("length", None, "max_tokens"),
        ("content_filter", None, "refusal"),
        ("aborted", None, "cancelled"),
        ("error", "turn_limit", "max_turn_requests"),
        ("error", "content_filter", "refusal"),
        ("error", "cancelled", "cancelled"),
    ],
)
def test_stop_reasons(stop_reason: str, code: str | None, expected: str) -> None:
    error = TurnError(code=code, message="m") if code else None  # type: ignore[arg-type]
    result = TurnResult(
        stop_reason=stop_reason,  # type: ignore[arg-type]
        tokens_used=TokenUsage(input_tokens=3, output_tokens=4),
        error=error,
    )
    response = prompt_response(result)
    assert response.stop_reason == expected
    assert response.usage is not None and response.usage.total_tokens == 7


def test_other_turn_errors_are_typed_json_rpc_errors() -> None:
    result = TurnResult(
        stop_reason="error",
        tokens_used=TokenUsage(),
        error=TurnError(code="provider_rate_limit", message="Slow down.", retryable=True),
    )
    with pytest.raises(RequestError) as raised:
        prompt_response(result)
    assert raised.value.code == -32010
    assert raised.value.data == {"code": "provider_rate_limit", "retryable": True}
    with pytest.raises(RequestError) as unknown:
        prompt_response(TurnResult(stop_reason="error", tokens_used=TokenUsage()))
    assert unknown.value.data == {"code": "internal", "retryable": False}


def test_titles_come_from_the_first_non_empty_line() -> None:
    assert title_from_prompt("\n\n  Fix   the bug \nmore") == "Fix the bug"
    assert title_from_prompt("   \n") is None
    long = title_from_prompt("x" * 200)
    assert long is not None and len(long) == 80 and long.endswith("…")
