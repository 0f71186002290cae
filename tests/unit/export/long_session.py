"""A long, realistic session for the YAML fast-path tests: tool rounds, code with tabs."""

from __future__ import annotations

from relavium_lsp.contracts.agent import DEFAULT_AGENT
from relavium_lsp.contracts.content import (
    DurableReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.session import AgentSessionRecord, SessionMessage
from tests.unit.export.export_support import Transcript, make_record

GO_SOURCE = 'package main\n\nfunc main() {\n\tfmt.Println("hi: there")\n}\n'


def long_session(turns: int) -> tuple[AgentSessionRecord, list[SessionMessage]]:
    """``turns`` logical turns of user → tool call → tool result → answer."""
    transcript = Transcript()
    for turn in range(1, turns + 1):
        transcript.add("user", f"Step {turn}: refactor module_{turn}.go; keep {{{{ctx}}}}.")
        transcript.add(
            "assistant",
            [
                DurableReasoningPart(text="Read it first."),
                ToolCallPart(id=f"c{turn}", name="read_file", args={"path": f"m{turn}.go"}),
            ],
        )
        transcript.add("tool", [ToolResultPart(tool_call_id=f"c{turn}", result=GO_SOURCE * turn)])
        transcript.add("assistant", [TextPart(text=f"Done: it's step {turn}.\n\n- one\n- two")])
    record = make_record(
        title="A long refactoring session",
        snapshot=DEFAULT_AGENT.model_dump(mode="json"),
        turn_count=turns,
    )
    return record, transcript.messages
