"""The handoff input filter: how the parent's messages are handed over (engine/handoff_context)."""

from __future__ import annotations

from relavium_lsp.contracts.content import TextPart, ToolCallPart, ToolResultPart
from relavium_lsp.contracts.delegation import DelegationLimits, HandoffInputFilter
from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.engine.collab.handoff_context import describe, render, resolve_filter
from relavium_lsp.tools.base import DelegationRequest


def _message(
    sequence: int,
    role: str,
    *parts: TextPart | ToolCallPart | ToolResultPart,
    agent: str | None = None,
) -> SessionMessage:
    return SessionMessage.model_validate(
        {
            "id": f"m{sequence}",
            "sessionId": "s",
            "sequenceNumber": sequence,
            "role": role,
            "content": [p.model_dump(mode="json", by_alias=True) for p in parts],
            "timestamp": "2026-11-26T21:00:00.000Z",
            "agentSlug": agent,
        }
    )


def test_the_call_wins_over_the_configuration() -> None:
    configured = DelegationLimits(input_filter="last_n", input_last_n=4, strip_tool_results=True)
    plain = DelegationRequest(agent="a", task="t", reason="")
    assert resolve_filter(configured, plain) == HandoffInputFilter(
        kind="last_n", last_n=4, strip_tool_results=True
    )
    chosen = DelegationRequest(
        agent="a", task="t", reason="", input_filter="full_history", strip_tool_results=False
    )
    assert resolve_filter(configured, chosen) == HandoffInputFilter(kind="full_history")
    assert resolve_filter(DelegationLimits(), plain) == HandoffInputFilter()
    assert describe(HandoffInputFilter(kind="last_n", last_n=3, strip_tool_results=True)) == (
        "last_n(3), tool results stripped"
    )


def test_render_attributes_every_message_and_strips_results_on_request() -> None:
    messages = [
        _message(1, "user", TextPart(text="Read it")),
        _message(
            2,
            "assistant",
            ToolCallPart(id="c1", name="read_file", args={"path": "a"}),
            agent="lead",
        ),
        _message(
            3, "tool", ToolResultPart(tool_call_id="c1", result="secret sauce", is_error=True)
        ),
        _message(4, "system", TextPart(text="a note for the record")),
        _message(5, "user", TextPart(text="Delegated task"), agent="boss"),
    ]
    lines = render(messages, strip_tool_results=False)
    assert lines == [
        "[user] Read it",
        '[assistant lead] (calls read_file {"path": "a"})',
        "[tool] (read_file returned (failed): secret sauce)",
        "[from boss] Delegated task",
    ]
    stripped = render(messages, strip_tool_results=True)
    assert "secret sauce" not in "".join(stripped) and len(stripped) == 3
