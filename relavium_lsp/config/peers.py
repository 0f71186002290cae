"""Merging the ``[peers]`` blocks of ``config.toml`` and ``project.toml`` (§2.5, §8).

Per field, the project's cap as far as it is no higher than the user's own (their file's,
else the default): :mod:`relavium_lsp.config.trust`. Both stay within the hard ceilings of
``contracts/peers_config.py``.
"""

from __future__ import annotations

from relavium_lsp.config.trust import tighten
from relavium_lsp.contracts.peers_config import PeerLimits, PeersConfig


def merge_peers(global_block: PeersConfig, project_block: PeersConfig) -> PeerLimits:
    """The project's caps no looser than the user's, per field."""
    defaults = PeerLimits()
    values: dict[str, object] = {}
    for name in PeersConfig.model_fields:
        mine = getattr(global_block, name)
        own = mine if mine is not None else getattr(defaults, name)
        values[name] = tighten("peers", name, own, getattr(project_block, name))
    return PeerLimits.model_validate(values)
