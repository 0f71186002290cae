"""The models a session may switch to: named by the configuration, nothing else."""

from __future__ import annotations

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import DEFAULT_AGENT, AgentDefinition, FallbackEntry
from relavium_lsp.contracts.config import EffectiveChatPolicy, ProviderConfig
from relavium_lsp.engine.sessions.models import ModelChoice, model_choices, with_first_model


def config(*agents: AgentDefinition, default_model: str | None = None) -> WorkspaceConfig:
    return WorkspaceConfig(
        agents={agent.id: agent for agent in agents},
        policy=EffectiveChatPolicy(),
        providers={"loop": ProviderConfig(kind="openai")},
        default_model=default_model,
    )


CODER = AgentDefinition(
    id="coder",
    name="Coder",
    model="gpt-4o-mini",
    provider="loop",
    fallback_chain=[
        FallbackEntry(model="claude-sonnet-4"),
        FallbackEntry(model="gpt-4o-mini", provider="loop"),
        FallbackEntry(model="mystery", provider="nowhere"),
    ],
)


def test_the_agents_own_model_comes_first_then_fallbacks_default_and_other_agents() -> None:
    reviewer = AgentDefinition(id="reviewer", name="Reviewer", model="loop/gpt-4.1")
    choices = model_choices(CODER, config(CODER, reviewer, default_model="gpt-5"))
    assert [choice.id for choice in choices] == [
        "loop/gpt-4o-mini",
        "anthropic/claude-sonnet-4",
        "openai/gpt-5",
        "loop/gpt-4.1",
    ]


def test_an_agent_without_a_model_offers_the_default_else_the_offline_model() -> None:
    assert model_choices(DEFAULT_AGENT, config(default_model="loop/gpt-4.1")) == [
        ModelChoice("loop", "gpt-4.1")
    ]
    assert [choice.id for choice in model_choices(DEFAULT_AGENT, config())] == [
        "offline/relavium-offline-demo"
    ]


def test_switching_keeps_the_fallback_chain_and_the_snapshot_untouched() -> None:
    switched = with_first_model(CODER, ModelChoice("anthropic", "claude-sonnet-4"))
    assert (switched.provider, switched.model) == ("anthropic", "claude-sonnet-4")
    assert switched.fallback_chain == CODER.fallback_chain
    assert CODER.model == "gpt-4o-mini"
