"""A served session at one moment, as a frozen value.

The planner builds each turn from a :class:`SessionSnapshot` (never from the live session
object), and the engine's front door hands the same value to the LSP and ACP layers, so
nothing outside the session can change it by accident.
"""

from __future__ import annotations

from dataclasses import dataclass

from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.session import AgentSessionRecord
from relavium_lsp.llm.catalog import DEFAULT_CONTEXT_WINDOW, model_info
from relavium_lsp.llm.fallback import ChainEntry


@dataclass(frozen=True)
class SessionSnapshot:
    """A session's row, agent, effective policy and model chain, as they were when taken."""

    record: AgentSessionRecord
    agent: AgentDefinition
    policy: EffectiveChatPolicy
    chain: tuple[ChainEntry, ...]
    # The newest introspection checkpoint's working memory ('' when none, §2.5).
    working_memory: str = ""
    # The workspace's long-term memory as this session was given it ('' when none, §2.6).
    workspace_memory: str = ""
    # The window the model's provider showed it really has (a ``context_length`` refusal
    # inside a turn, §2.3); None: the configured or catalogued one (or the default guess).
    learned_context_window: int | None = None

    @property
    def id(self) -> str:
        """The session id."""
        return self.record.id

    @property
    def model(self) -> str:
        """The model the session asks first (its fallback chain may answer with another)."""
        return self.chain[0].model

    @property
    def context_window_known(self) -> bool:
        """Whether the window is known (configured, catalogued or learnt), not the default guess.

        A turn compacts ahead of a provider's refusal only against a known window (§2.3). The
        provider seam reports a window, not where it came from: a configured window of exactly
        the default reads as the guess.
        """
        entry = self.chain[0]
        return (
            self.learned_context_window is not None
            or model_info(entry.model) is not None
            or entry.provider.context_window(entry.model) != DEFAULT_CONTEXT_WINDOW
        )

    @property
    def context_window(self) -> int:
        """The first model's context window in tokens (as its provider showed it, if it did)."""
        if self.learned_context_window is not None:
            return self.learned_context_window
        entry = self.chain[0]
        return entry.provider.context_window(entry.model)
