import pytest
from pydantic import ValidationError

from relavium_lsp.contracts.events import (
    AgentToken,
    StampedEvent,
    TokenUsage,
    TurnCompleted,
    TurnError,
)
from relavium_lsp.contracts.session import PartialSessionContext, SessionContext


def test_envelope_is_flat_and_round_trips():
    event = StampedEvent(
        session_id="s1",
        sequence_number=7,
        timestamp="2026-01-01T00:00:00Z",
        payload=TurnCompleted(
            stop_reason="error",
            tokens_used=TokenUsage(input_tokens=3, output_tokens=4),
            error=TurnError(code="turn_limit", message="too many turns"),
        ),
    )
    wire = event.to_wire()
    assert wire["type"] == "session:turn_completed"
    assert wire["sequenceNumber"] == 7
    assert wire["tokensUsed"] == {
        "inputTokens": 3,
        "outputTokens": 4,
        "cacheReadTokens": 0,
        "cacheWriteTokens": 0,
    }
    assert wire["error"]["code"] == "turn_limit"
    assert StampedEvent.from_wire(wire) == event


def test_unknown_event_type_and_error_code_rejected():
    base = {"sessionId": "s", "sequenceNumber": 1, "timestamp": "t"}
    with pytest.raises(ValidationError):
        StampedEvent.from_wire({**base, "type": "agent:nope"})
    with pytest.raises(ValidationError):
        TurnError(code="made_up", message="x")  # type: ignore[arg-type]
    assert StampedEvent.from_wire(
        {**base, "type": "agent:token", "token": "hi", "model": "m"}
    ).payload == AgentToken(token="hi", model="m")


def test_partial_context_overrides_only_set_fields():
    detected = SessionContext(working_dir="/w", active_file="/w/a.py", git_ref="main")
    merged = PartialSessionContext.model_validate(
        {"gitRef": "dev", "fsScopeTier": "project"}
    ).apply_to(detected)
    assert merged.active_file == "/w/a.py"
    assert merged.git_ref == "dev"
    assert merged.fs_scope_tier == "project"
    with pytest.raises(ValidationError):
        PartialSessionContext.model_validate(
            {"selection": {"file": "a", "startLine": 5, "endLine": 2}}
        )
