"""Token usage: one type on the LLM seam, in events, results and stored messages.

It lives apart from ``events`` so that ``session`` (stored messages carry their usage) and
``events`` (which names session contexts) can both use it without importing each other.
"""

from __future__ import annotations

from pydantic import ConfigDict

from relavium_lsp.contracts.base import WireModel


class TokenUsage(WireModel):
    """Tokens spent by a turn (all provider calls, fallbacks and compaction included).

    The one usage type: the same model counts one provider call on the LLM seam
    (``StopChunk.usage``), a turn in ``session:turn_completed`` and in the
    ``relavium/sendMessage`` result, and the calls behind one stored assistant message
    (``SessionMessage.token_usage``). ``input_tokens`` counts every prompt token (what the
    context window holds); ``cache_read_tokens`` / ``cache_write_tokens`` are the parts of
    them read from or written to the provider's prompt cache, billed at their own rates.
    """

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def uncached_input_tokens(self) -> int:
        """Prompt tokens billed at the ordinary input rate."""
        return max(0, self.input_tokens - self.cache_read_tokens - self.cache_write_tokens)

    def plus(self, other: TokenUsage) -> TokenUsage:
        """Return the sum of two usages."""
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )
