"""Which models a session may switch to, named the way the configuration names them.

A session asks its agent's first model and falls back along the agent's chain. A front end
may offer the user another first model: any model the workspace configuration already names
— the agent's own and its fallbacks, the ``default_model``, and the other agents' models —
so a switch never reaches a provider or endpoint the configuration did not set up. Each
choice is ``<provider id>/<model>``, the form :func:`~relavium_lsp.llm.providers.locate_model`
reads back unambiguously.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.errors import ProviderSetupError
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.llm.providers import locate_model, primary_reference


@dataclass(frozen=True)
class ModelChoice:
    """One model a session can ask first."""

    provider: str
    model: str

    @property
    def id(self) -> str:
        """``<provider id>/<model>``."""
        return f"{self.provider}/{self.model}"


def model_choices(agent: AgentDefinition, config: WorkspaceConfig) -> list[ModelChoice]:
    """The models the configuration names, the agent's own first (no duplicates)."""
    references = [primary_reference(agent, config.default_model)]
    references += [(step.provider, step.model) for step in agent.fallback_chain]
    if config.default_model:
        references.append((None, config.default_model))
    references += [(other.provider, other.model) for other in config.agents.values() if other.model]
    choices: list[ModelChoice] = []
    for provider, model in references:
        try:
            choice = ModelChoice(*locate_model(provider, model, config.providers))
        except ProviderSetupError:
            continue  # a reference to a provider this workspace lacks is no choice
        if choice not in choices:
            choices.append(choice)
    return choices


def with_effective_model(agent: AgentDefinition, config: WorkspaceConfig) -> AgentDefinition:
    """The agent naming the model and provider it would really ask first.

    An agent without its own model (the built-in default agent, usually) asks the
    workspace's ``default_model``, else the offline model; lists show that, not a blank.
    """
    if agent.model and agent.provider:
        return agent
    try:
        provider, model = locate_model(
            *primary_reference(agent, config.default_model), config.providers
        )
    except ProviderSetupError:
        return agent  # the session would fail to start too; show what is configured
    return agent.model_copy(update={"model": model, "provider": provider})


def with_first_model(agent: AgentDefinition, choice: ModelChoice) -> AgentDefinition:
    """The agent asking ``choice`` first, its fallback chain unchanged."""
    return agent.model_copy(update={"model": choice.model, "provider": choice.provider})


def first_choice(chain: Sequence[ChainEntry]) -> ModelChoice:
    """The model a chain asks first, as a choice."""
    return ModelChoice(chain[0].provider.provider_id, chain[0].model)
