"""Stored transcripts → the updates session/load replays."""

from __future__ import annotations

from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from relavium_lsp.acp.replay import replay_updates
from relavium_lsp.acp.tool_calls import CallDescription, describe_call
from relavium_lsp.contracts.content import (
    DurableContentPart,
    DurableMediaPart,
    DurableReasoningPart,
    HandleSource,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.session import MessageRole, SessionMessage

HANDLE = "media://sha256-" + "0" * 64


def message(sequence: int, role: MessageRole, *parts: DurableContentPart) -> SessionMessage:
    return SessionMessage(
        id=f"m{sequence}",
        session_id="s",
        sequence_number=sequence,
        role=role,
        content=list(parts),
        timestamp="2025-01-01T00:00:00.000Z",
    )


def describe(tool: str, args: dict[str, Any]) -> CallDescription:
    return describe_call(tool, args, None)


def sanitize(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {key: "…" if key == "content" else value for key, value in args.items()}


def test_a_conversation_replays_in_order() -> None:
    updates = replay_updates(
        [
            message(1, "system", TextPart(text="[summary of earlier turns]")),
            message(
                2,
                "user",
                TextPart(text="fix it"),
                DurableMediaPart(
                    mime_type="image/png", source=HandleSource(handle=HANDLE), name="s.png"
                ),
            ),
            message(
                3,
                "assistant",
                DurableReasoningPart(text="thinking"),
                DurableReasoningPart(text="hidden", redacted=True),
                TextPart(text="On it."),
                ToolCallPart(id="c1", name="write_file", args={"path": "a.py", "content": "x"}),
                ToolCallPart(id="c2", name="read_file", args={"path": "b.py"}),
            ),
            message(4, "tool", ToolResultPart(tool_call_id="c1", result="Created a.py")),
            message(5, "tool", ToolResultPart(tool_call_id="c2", result="nope", is_error=True)),
            message(6, "assistant", TextPart(text="Done.")),
            message(7, "user", TextPart(text="and then?")),
            message(8, "assistant", ToolCallPart(id="c3", name="git_status", args={})),
        ],
        describe=describe,
        sanitize=sanitize,
    )
    shapes = [(type(u).__name__, getattr(u, "status", None)) for u in updates]
    assert shapes == [
        ("UserMessageChunk", None),
        ("UserMessageChunk", None),
        ("AgentThoughtChunk", None),
        ("AgentMessageChunk", None),
        ("ToolCallStart", "pending"),
        ("ToolCallStart", "pending"),
        ("ToolCallProgress", "completed"),
        ("ToolCallProgress", "failed"),
        ("AgentMessageChunk", None),
        ("UserMessageChunk", None),
        ("ToolCallStart", "pending"),
        ("ToolCallProgress", "failed"),  # never answered: the turn was cut short
    ]
    first, image = updates[0], updates[1]
    assert isinstance(first, UserMessageChunk) and first.content.text == "fix it"
    assert first.message_id == "m2"
    assert isinstance(image, UserMessageChunk) and "s.png" in image.content.text
    assert isinstance(updates[2], AgentThoughtChunk) and updates[2].content.text == "thinking"
    assert isinstance(updates[3], AgentMessageChunk) and updates[3].message_id == "m3"
    write = updates[4]
    assert isinstance(write, ToolCallStart)
    assert (write.title, write.kind, write.raw_input) == (
        "Write a.py",
        "edit",
        {"path": "a.py", "content": "…"},
    )
    result = updates[6]
    assert isinstance(result, ToolCallProgress) and result.tool_call_id == "c1"
    assert result.content is not None
