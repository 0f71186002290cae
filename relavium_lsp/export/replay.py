"""Replay, the pure parts: what is replayed, the replay policy, and comparing transcripts.

A replay re-runs a session's completed turns in a new session against the session's own
recordings (``relavium_lsp.engine.history.replay`` does that) and compares the replayed
transcript with the original by role and content (ids and timestamps always differ).

What is replayed: completed logical turns with a single user message. Interrupted or
unanswered turns cannot be reproduced (nothing recorded what never happened) and system
rows (compaction boundaries, interruption markers) are not turns; both are reported as
skipped. The replay policy is the workspace's, with automatic compaction and the cost cap
switched off and the turn limits raised to what the original needed, so the engine does
exactly as many model calls as were recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.content import (
    ContentPart,
    DurableMediaPart,
    DurableReasoningPart,
    MediaPart,
    ReasoningPart,
    TextPart,
)
from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.export.turns import LogicalTurn


@dataclass(frozen=True)
class TranscriptEntry:
    """What a replay compares: a message's role and durable content (wire form)."""

    role: str
    content: list[dict[str, Any]]

    @classmethod
    def of(cls, message: SessionMessage) -> TranscriptEntry:
        """The comparable view of a stored message."""
        return cls(role=message.role, content=[part.to_wire() for part in message.content])


def replayable(turn: LogicalTurn) -> bool:
    """A completed turn whose single user message can be sent again."""
    if not turn.completed or len(turn.user_messages) != 1:
        return False
    text, attachments = user_input(turn.user_messages[0])
    return bool(text.strip() or attachments)


def user_input(message: SessionMessage) -> tuple[str, list[ContentPart]]:
    """``send_message`` arguments that make the engine store ``message``'s content again."""
    parts = list(message.content)
    first = parts[0] if parts else None
    text = first.text if isinstance(first, TextPart) else ""
    attachments: list[ContentPart] = []
    for part in parts[1:] if isinstance(first, TextPart) else parts:
        if isinstance(part, DurableMediaPart):
            attachments.append(
                MediaPart(mime_type=part.mime_type, source=part.source, name=part.name)
            )
        elif isinstance(part, DurableReasoningPart):
            attachments.append(ReasoningPart(text=part.text, redacted=part.redacted))
        else:
            attachments.append(part)
    return text, attachments


def replay_config(
    agent: AgentDefinition, policy: EffectiveChatPolicy, turns: Sequence[LogicalTurn]
) -> WorkspaceConfig:
    """The replay's configuration: only the original agent, the policy relaxed as above."""
    rounds = max(
        (sum(1 for message in turn.answers if message.role == "assistant") for turn in turns),
        default=1,
    )
    replay_policy = policy.model_copy(
        update={
            "max_turns": max(policy.max_turns, len(turns) + 1),
            "max_tool_turns": max(policy.max_tool_turns, rounds),
            "max_messages": None,
            "auto_compact": False,
            "max_cost_microcents": None,
        }
    )
    return WorkspaceConfig(
        agents={agent.id: agent}, policy=replay_policy, providers={}, default_model=None
    )


def compare(original: Sequence[TranscriptEntry], replayed: Sequence[TranscriptEntry]) -> list[str]:
    """Human-readable differences between two transcripts (empty when they are equal)."""
    differences: list[str] = []
    for position, (before, after) in enumerate(zip(original, replayed, strict=False), start=1):
        if before.role != after.role:
            differences.append(f"message {position}: role {before.role} became {after.role}")
        elif before.content != after.content:
            differences.append(f"message {position} ({before.role}): content differs")
    if len(original) != len(replayed):
        differences.append(
            f"the original has {len(original)} message(s), the replay {len(replayed)}"
        )
    return differences
