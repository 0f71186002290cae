"""The ``[peers]`` configuration block: caps on peer messages (``docs/design.md`` §2.5, §8).

Written in ``config.toml`` and ``project.toml``::

    [peers]
    max_message_chars = 8000   # the longest peer message
    max_recipients = 8         # sessions one message may go to
    max_hops = 3               # how often a message may be passed on by answering turns

Every field is optional so that layers merge per field (project over global over the
defaults, which are the caps the engine enforced before the block existed). A file may not
go past the hard ceilings of ``contracts/peers.py``, which are also what
``relavium/sendPeerMessage`` accepts before the engine applies the configured caps.
"""

from __future__ import annotations

from pydantic import Field

from relavium_lsp.contracts.base import AuthoredModel
from relavium_lsp.contracts.peers import (
    MAX_PEER_HOPS,
    MAX_PEER_RECIPIENTS,
    MAX_PEER_TEXT_CHARS,
    PEER_HOPS_CEILING,
    PEER_RECIPIENTS_CEILING,
    PEER_TEXT_CHARS_CEILING,
)


class PeersConfig(AuthoredModel):
    """``[peers]`` as a file writes it; ``None`` leaves the field to a lower layer."""

    max_message_chars: int | None = Field(default=None, ge=1, le=PEER_TEXT_CHARS_CEILING)
    max_recipients: int | None = Field(default=None, ge=1, le=PEER_RECIPIENTS_CEILING)
    # 1: a turn that answers a peer message may not send one on.
    max_hops: int | None = Field(default=None, ge=1, le=PEER_HOPS_CEILING)


class PeerLimits(AuthoredModel):
    """The merged ``[peers]`` caps, every default filled in: what the engine enforces."""

    max_message_chars: int = MAX_PEER_TEXT_CHARS
    max_recipients: int = MAX_PEER_RECIPIENTS
    max_hops: int = MAX_PEER_HOPS
