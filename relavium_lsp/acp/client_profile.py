"""Which ``session/update`` kinds a client understands.

ACP v1 grew without a version bump: every client negotiates ``protocolVersion: 1``, but a
client built on an early v1 schema (the ``@zed-industries/agent-client-protocol`` 0.4
releases, still in use) validates each notification against the eight update kinds it
knows and answers any other with ``-32602 Invalid params``. The later stable kinds —
``session_info_update``, ``usage_update`` and ``config_option_update`` — are therefore sent
only to a client whose ``initialize`` shows it was built on a later schema: one that names
itself (``clientInfo``) or advertises a client capability those early schemas lacked
(``session``, ``auth``, ``elicitation``, ``plan``). Everyone else gets the early set, which
every v1 client accepts; what the later kinds carry is still reachable there (titles in
``session/list``, spend through ``/usage``, settings through ``session/set_mode``).

Kinds a client must opt into by capability (``notice``, ``compaction_update``) are never
sent: this agent produces none.
"""

from __future__ import annotations

from dataclasses import dataclass

from acp.schema import ClientCapabilities, Implementation

# The SessionUpdate kinds of the earliest v1 schema still in use.
EARLY_V1_UPDATES = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
        "available_commands_update",
        "current_mode_update",
    }
)
# Stable v1 additions that need no client capability.
LATER_V1_UPDATES = frozenset({"session_info_update", "usage_update", "config_option_update"})
# Client capabilities that only later v1 schemas define.
_LATER_CAPABILITIES = frozenset({"session", "auth", "elicitation", "plan"})


@dataclass(frozen=True)
class ClientProfile:
    """What one connected client understands."""

    name: str
    updates: frozenset[str]

    @property
    def knows_later_updates(self) -> bool:
        """Whether the later stable kinds reach this client."""
        return LATER_V1_UPDATES <= self.updates

    def knows(self, session_update: str) -> bool:
        """Whether an update of this kind may be sent."""
        return session_update in self.updates


# Until initialize says otherwise, send only what every v1 client accepts.
EARLY_CLIENT = ClientProfile(name="unknown", updates=EARLY_V1_UPDATES)


def client_profile(
    capabilities: ClientCapabilities | None, info: Implementation | None
) -> ClientProfile:
    """The profile of a client from its ``initialize`` request."""
    name = info.name if info is not None else "unknown"
    sent = capabilities.model_fields_set if capabilities is not None else set()
    if info is not None or sent & _LATER_CAPABILITIES:
        return ClientProfile(name=name, updates=EARLY_V1_UPDATES | LATER_V1_UPDATES)
    return ClientProfile(name=name, updates=EARLY_V1_UPDATES)
