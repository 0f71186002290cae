"""Merging the ``[peers]`` blocks of ``config.toml`` and ``project.toml`` (§2.5, §8).

Peer caps are resource limits, not trust (a message only reaches sessions of the same
workspace, bounded by the hard ceilings of ``contracts/peers_config.py``): the project wins
per field, like ``[delegation]``.
"""

from __future__ import annotations

from relavium_lsp.contracts.peers_config import PeerLimits, PeersConfig


def merge_peers(global_block: PeersConfig, project_block: PeersConfig) -> PeerLimits:
    """Project over global over the defaults, per field."""
    values: dict[str, object] = {}
    for name in PeersConfig.model_fields:
        for layer in (project_block, global_block):
            value = getattr(layer, name)
            if value is not None:
                values[name] = value
                break
    return PeerLimits.model_validate(values)
