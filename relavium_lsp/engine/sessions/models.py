"""Which models a session may switch to, named the way the configuration names them.

A session asks its agent's first model and falls back along the agent's chain. A front end
may offer the user another first model: any model the workspace configuration already names
— the agent's own and its fallbacks, the ``default_model``, and the other agents' models —
so a switch never reaches a provider or endpoint the configuration did not set up. Each
choice is ``<provider id>/<model>``, the form :func:`~relavium_lsp.llm.providers.locate_model`
reads back unambiguously.

The model a session was switched to is kept with the session (``docs/design.md`` §2.5):
``relavium/setModel`` (and ACP's ``model`` option) make a session ask another model first.
The choice is stored in the session's row (:mod:`relavium_lsp.store.rows.model_choice`), so a
restarted server, or another window that opens the session, asks the same model. A stored
choice the workspace configuration no longer offers (its provider was removed, the model
renamed) is ignored with a log line: the session asks its agent's own model again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.errors import ProviderSetupError
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.llm.providers import locate_model, primary_reference
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.rows.model_choice import load_model_choice, save_model_choice


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


_log = logging.getLogger(__name__)


async def remember_choice(store: AsyncSessionStore, session_id: str, choice: ModelChoice) -> None:
    """Store ``choice`` as the model the session asks first from now on."""
    await store.run(lambda s: save_model_choice(s.connection, session_id, choice.id, choice.model))


async def stored_choice(
    store: AsyncSessionStore, session_id: str, agent: AgentDefinition, config: WorkspaceConfig
) -> ModelChoice | None:
    """The stored choice while the configuration still offers it; ``None`` otherwise."""
    stored = await store.run(lambda s: load_model_choice(s.connection, session_id))
    if stored is None:
        return None
    choice = next((c for c in model_choices(agent, config) if c.id == stored), None)
    if choice is None:
        _log.warning(
            "session %s was switched to model %s, which this workspace's configuration no "
            "longer offers; it asks its agent's model again",
            session_id,
            stored,
        )
    return choice


async def agent_asking_stored_model(
    store: AsyncSessionStore, session_id: str, agent: AgentDefinition, config: WorkspaceConfig
) -> AgentDefinition:
    """``agent`` asking the session's stored model first (itself when there is none)."""
    choice = await stored_choice(store, session_id, agent, config)
    return agent if choice is None else with_first_model(agent, choice)
