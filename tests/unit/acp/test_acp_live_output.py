"""Live ``run_command`` output reaches ACP clients as ``tool_call_update`` content."""

from __future__ import annotations

import json
from pathlib import Path

from acp.schema import ContentToolCallContent, TextContentBlock, ToolCallProgress

from relavium_lsp.acp.tool_calls import CallBook, CallRecord, describe_call
from relavium_lsp.acp.updates import EventMapper
from relavium_lsp.contracts.events import AgentToolResult, StampedEvent, TokenUsage, TurnCompleted
from relavium_lsp.contracts.terminal import AgentToolOutput
from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.unit.acp.acp_client import RecordingClient, connect_in_process
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

SID = "s-1"
SCRIPT = "echo live-one; echo live-two"


def stamp(payload: object, sequence: int = 1) -> StampedEvent:
    return StampedEvent.model_validate(
        {
            "sessionId": SID,
            "sequenceNumber": sequence,
            "timestamp": "2025-01-01T00:00:00.000Z",
            "payload": payload,
        }
    )


def texts(update: object) -> list[str]:
    assert isinstance(update, ToolCallProgress) and update.content is not None
    out = []
    for item in update.content:
        assert isinstance(item, ContentToolCallContent)
        assert isinstance(item.content, TextContentBlock)
        out.append(item.content.text)
    return out


def output(text: str, tool: str = "run_command", call_id: str = "c") -> AgentToolOutput:
    return AgentToolOutput(tool_id=tool, call_id=call_id, text=text)


def test_each_piece_carries_the_whole_output_so_far_and_marks_the_call_running() -> None:
    book = CallBook()
    record = CallRecord(
        session_id=SID,
        call_id="c",
        tool="run_command",
        args={},
        description=describe_call("run_command", {}, None),
    )
    book.open(record)
    events = EventMapper(book, lambda session_id: None)
    (first,) = events.map(stamp(output("one\n")))
    (second,) = events.map(stamp(output("two\n")))
    assert isinstance(first, ToolCallProgress) and first.status == "in_progress"
    assert texts(first) == ["one\n"] and texts(second) == ["one\ntwo\n"]
    assert record.started
    # Nothing for empty pieces or tools whose output is not shown live.
    assert events.map(stamp(output(""))) == []
    assert events.map(stamp(output("x", tool="terminal_start", call_id="t"))) == []
    # The result needs no second in_progress: it is the final status with the summary.
    result = AgentToolResult(
        tool_id="run_command", call_id="c", success=True, output_summary="done", duration_ms=1
    )
    (done,) = events.map(stamp(result))
    assert isinstance(done, ToolCallProgress) and done.status == "completed"
    assert texts(done) == ["done"]


def test_a_call_without_a_record_streams_too_and_a_settled_turn_forgets_it() -> None:
    events = EventMapper(CallBook(), lambda session_id: None)
    (running,) = events.map(stamp(output("a")))
    assert texts(running) == ["a"]
    events.map(stamp(TurnCompleted(stop_reason="aborted", tokens_used=TokenUsage())))
    (again,) = events.map(stamp(output("b")))
    assert texts(again) == ["b"]


async def test_a_running_command_streams_into_its_tool_call(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_git_workspace(tmp_path / "repo", branch="main")
    client = RecordingClient(decision="allow-once")
    arguments = json.dumps({"command": ["sh", "-c", SCRIPT]})
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        agent = workspace / ".relavium" / "agents" / "coder.agent.yaml"
        agent.write_text(
            agent.read_text(encoding="utf-8").replace("tools: [", "tools: [run_command, "),
            encoding="utf-8",
        )
        config = isolated_home / ".relavium" / "config.toml"  # the user's own allowlist
        config.write_text(
            config.read_text(encoding="utf-8")
            + f"\n[chat]\nallowed_commands = [\"sh -c '{SCRIPT}'\"]\n",
            encoding="utf-8",
        )
        model.script(
            openai_stream(
                tool_calls=[ScriptedToolCall(id="r", name="run_command", arguments=arguments)]
            ),
            openai_stream(text=["Ran it."]),
        )
        async with connect_in_process(client, fs=False) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            result = await conn.prompt(session_id=sid, prompt=[{"type": "text", "text": "run"}])
            assert result.stop_reason == "end_turn"
            events = client.tool_events(sid, "r")
    assert events[-1].status == "completed"
    live = [
        event
        for event in events[:-1]
        if isinstance(event, ToolCallProgress) and event.content is not None
    ]
    assert live, [event.status for event in events]
    assert all(event.status == "in_progress" for event in live)
    assert "live-two" in "".join(texts(live[-1]))
