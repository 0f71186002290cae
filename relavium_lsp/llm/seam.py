"""The one seam between the engine and any model provider (``docs/design.md`` §5).

No vendor type crosses it: adapters translate their wire format into these chunks, and the
engine only ever sees :data:`LlmChunk` values from :meth:`Provider.stream`. Token counts use
the contracts' :class:`~relavium_lsp.contracts.events.TokenUsage`, the one usage type the
seam, the events and the LSP results share.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from relavium_lsp._compat.pydantic import trusted_builder
from relavium_lsp.contracts.content import ContentPart, estimate_tokens
from relavium_lsp.contracts.events import TokenUsage

LlmErrorKind = Literal[
    "rate_limit",
    "overloaded",
    "timeout",
    "transport",
    "auth",
    "bad_request",
    "content_filter",
    "context_length",
    "cancelled",
    "unknown",
]
RETRYABLE_KINDS: frozenset[LlmErrorKind] = frozenset(
    {"rate_limit", "overloaded", "timeout", "transport"}
)
LlmStopReason = Literal["stop", "length", "tool_use", "content_filter"]


class SeamModel(BaseModel):
    """Seam values are internal: snake_case, immutable, no unknown fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class LlmMessage(SeamModel):
    """A provider-facing message, projected from stored messages at call time."""

    role: Literal["user", "assistant", "tool"]
    content: tuple[ContentPart, ...]


class ToolSpec(SeamModel):
    """A tool as the model sees it: name, description, JSON-Schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


ToolChoice = Literal["auto", "none", "required"] | str


class LlmRequest(SeamModel):
    """One model call."""

    model: str
    system: str = ""
    messages: tuple[LlmMessage, ...]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice = "auto"
    temperature: float | None = None
    max_tokens: int | None = None
    stop_sequences: tuple[str, ...] = ()

    def estimated_input_tokens(self) -> int:
        """About how many context tokens the request takes (four characters a token).

        A rough count, the same for every provider: the cost cap prices it before the call,
        and a turn compares it (corrected by what providers reported) with the model's
        context window (``engine/turn/window.py``).
        """
        tools = sum(len(str(spec.parameters)) + len(spec.description) for spec in self.tools)
        messages = sum(estimate_tokens(message.content) for message in self.messages)
        return (len(self.system) + tools) // 4 + messages


class LlmError(SeamModel):
    """A typed provider failure. ``message`` is user-safe and never contains a key."""

    kind: LlmErrorKind
    message: str
    status: int | None = None
    retry_after_s: float | None = None
    # Billable output (text, reasoning, a tool call or output tokens) was delivered before
    # the failure: trying another model would buy the answer twice.
    partial: bool = False
    # ``context_length``: how many tokens the provider said the refused request held, when it
    # said (the turn corrects its estimate with it, ``engine/turn/window.py``).
    reported_tokens: int | None = None

    @property
    def retryable(self) -> bool:
        """Whether the fallback chain may try the next model (never after billable output)."""
        return self.kind in RETRYABLE_KINDS and not self.partial


class TextDelta(SeamModel):
    """Assistant text."""

    type: Literal["text_delta"] = "text_delta"
    text: str


# ``TextDelta(text=text)`` for the per-delta path, without validating a ``str`` again: only
# ever called with a ``str`` a typed decoder produced, so validation could not change or refuse
# anything (``tests/unit/llm/test_seam_fast_delta.py``).
new_text_delta: Callable[[str], TextDelta] = trusted_builder(
    TextDelta, {"type": "text_delta"}, "text"
)


class ReasoningDelta(SeamModel):
    """Reasoning text; the signature (if any) arrives on the block's last delta."""

    type: Literal["reasoning_delta"] = "reasoning_delta"
    text: str
    signature: str | None = None
    redacted: bool = False


class ToolCallStart(SeamModel):
    """A tool call began (``index`` orders concurrent calls within one response)."""

    type: Literal["tool_call_start"] = "tool_call_start"
    index: int
    id: str
    name: str


class ToolCallDelta(SeamModel):
    """A fragment of a tool call's JSON arguments."""

    type: Literal["tool_call_delta"] = "tool_call_delta"
    index: int
    arguments_delta: str


class ToolCallEnd(SeamModel):
    """A tool call is complete; ``args_error`` is set when the arguments were not JSON."""

    type: Literal["tool_call_end"] = "tool_call_end"
    index: int
    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    args_error: str | None = None


class StopChunk(SeamModel):
    """The call finished normally."""

    type: Literal["stop"] = "stop"
    stop_reason: LlmStopReason
    usage: TokenUsage


class ErrorChunk(SeamModel):
    """The call failed; ``usage`` holds whatever was spent before the failure."""

    type: Literal["error"] = "error"
    error: LlmError
    usage: TokenUsage = Field(default_factory=TokenUsage)


LlmChunk = Annotated[
    TextDelta
    | ReasoningDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | StopChunk
    | ErrorChunk,
    Field(discriminator="type"),
]


class ProviderCapabilities(SeamModel):
    """What a provider can do, declared rather than discovered by failing."""

    streaming: bool = True
    tools: bool = True
    reasoning: bool = False
    needs_key: bool = True
    key_env_var: str | None = None


class Provider(Protocol):
    """A model provider: one streaming method, declared capabilities.

    ``stream`` never raises for provider faults: every failure becomes a final
    :class:`ErrorChunk`. Cancelling the consumer (``asyncio`` cancellation) closes the
    underlying connection.
    """

    provider_id: str
    capabilities: ProviderCapabilities

    def stream(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        """Stream one call's chunks, ending with exactly one stop or error chunk."""
        ...

    def context_window(self, model: str) -> int:
        """The model's context window in tokens (a conservative default if unknown)."""
        ...
