"""The model a session was switched to, kept with the session (``docs/design.md`` §2.5).

``relavium/setModel`` (and ACP's ``model`` option) make a session ask another model first.
The choice is stored in the session's row (:mod:`relavium_lsp.store.rows.model_choice`), so a
restarted server, or another window that opens the session, asks the same model. A stored
choice the workspace configuration no longer offers (its provider was removed, the model
renamed) is ignored with a log line: the session asks its agent's own model again.
"""

from __future__ import annotations

import logging

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.engine.sessions.models import ModelChoice, model_choices, with_first_model
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.rows.model_choice import load_model_choice, save_model_choice

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
