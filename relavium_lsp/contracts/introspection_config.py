"""The ``[introspection]`` table: when introspection passes run by themselves (§2.5).

``relavium/checkpointSession`` always works; this table decides the automatic passes of
:mod:`relavium_lsp.engine.memory.introspection_triggers`. Every field is optional in a file so the
global ``config.toml`` and a workspace's ``project.toml`` merge per field
(:func:`relavium_lsp.config.introspection.merge_introspection`).
"""

from __future__ import annotations

from pydantic import Field

from relavium_lsp.contracts.base import AuthoredModel

DEFAULT_EVERY_TURNS = 20
DEFAULT_IDLE_SECONDS = 600.0
MAX_IDLE_SECONDS = 7 * 86_400


class IntrospectionConfig(AuthoredModel):
    """``[introspection]`` as a file writes it (unset fields come from the other layer)."""

    # The master switch for automatic passes (the manual request is not affected).
    enabled: bool | None = None
    # Checkpoint the workspace's earlier sessions when a new one starts.
    on_new_session: bool | None = None
    # A pass after every N turns since the last checkpoint (0: never by count); a session
    # that reaches its max_turns is checkpointed either way.
    every_turns: int | None = Field(default=None, ge=0, le=10_000)
    # A pass once a session has been quiet this long (0: never).
    idle_seconds: float | None = Field(default=None, ge=0, le=MAX_IDLE_SECONDS)
    # Idle passes for sessions whose model costs money too (off: only free/local models).
    idle_on_paid_providers: bool | None = None


class EffectiveIntrospection(AuthoredModel):
    """The merged ``[introspection]`` values with every default filled in."""

    enabled: bool = True
    on_new_session: bool = True
    every_turns: int = DEFAULT_EVERY_TURNS
    idle_seconds: float = DEFAULT_IDLE_SECONDS
    idle_on_paid_providers: bool = False
