"""Whether an automatic introspection pass is wanted, and due (``docs/design.md`` §2.5).

Pure decisions over the ``[introspection]`` settings, the session and what the durable log
says is left to introspect; :mod:`relavium_lsp.engine.memory.introspection_triggers` acts on them.
"""

from __future__ import annotations

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import OFFLINE_PROVIDER_ID
from relavium_lsp.contracts.events import CheckpointReason
from relavium_lsp.contracts.introspection_config import EffectiveIntrospection
from relavium_lsp.engine.sessions.session import AgentSession
from relavium_lsp.llm.catalog import model_info
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.store.rows.event_reads import PendingWork


def costs_money(entry: ChainEntry, config: WorkspaceConfig) -> bool:
    """Whether calls to the session's first model are billed.

    Free: the offline model, a cassette, a model the catalog prices at zero, and a model the
    catalog does not know on a provider whose endpoint is local (``allow_local_endpoint``:
    Ollama, llama.cpp, …). Anything else — a priced model anywhere, an unknown model on a
    hosted API — counts as paid.
    """
    provider_id = entry.provider.provider_id
    if provider_id == OFFLINE_PROVIDER_ID:
        return False
    provider = config.providers.get(provider_id)
    if provider is not None and provider.kind == "cassette":
        return False
    info = model_info(entry.model)
    if info is not None:
        return info.input_microcents_per_mtok > 0 or info.output_microcents_per_mtok > 0
    return not (provider is not None and provider.allow_local_endpoint)


def pass_is_due(
    reason: CheckpointReason,
    work: PendingWork,
    settings: EffectiveIntrospection,
    session: AgentSession,
) -> bool:
    """Whether a pass for ``reason`` has something to do now."""
    if work.fresh_messages == 0:
        return False
    if reason != "turn_limit":
        return True
    every = settings.every_turns
    return (every > 0 and work.turns >= every) or work.turn_count >= session.policy.max_turns


def pass_is_allowed(
    reason: CheckpointReason,
    settings: EffectiveIntrospection,
    session: AgentSession,
    config: WorkspaceConfig,
) -> bool:
    """Whether the configuration (as it is now) still wants a pass for ``reason``."""
    if not settings.enabled:
        return False
    if reason == "new_session":
        return settings.on_new_session
    if reason == "idle":
        return settings.idle_seconds > 0 and idle_passes_allowed(settings, session, config)
    return True


def idle_passes_allowed(
    settings: EffectiveIntrospection, session: AgentSession, config: WorkspaceConfig
) -> bool:
    """Whether idle passes may run for the session (paid models only when asked for)."""
    return settings.idle_on_paid_providers or not costs_money(session.chain[0], config)
