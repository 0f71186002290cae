"""Resolving a server's keychain references into the env and headers it starts with.

Values exist only in memory, only while a connection is being opened, and are registered
with the log redactor (:func:`relavium_lsp.log_secrets.register_secret`) so that even a server
echoing them to stderr cannot put them in our log. Nothing here logs or raises with a value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from relavium_lsp.config.mcp_servers import ServerDefinition
from relavium_lsp.contracts.mcp import KeychainRef
from relavium_lsp.llm.keys import keychain_key
from relavium_lsp.log_secrets import register_secret

KeychainLookup = Callable[[str], str | None]


class MissingSecret(Exception):
    """A keychain reference has no stored value (the message names the entry, not a value)."""


@dataclass(frozen=True)
class ServerSecrets:
    """The env and headers a connection starts with (never shown anywhere)."""

    env: dict[str, str] = field(default_factory=dict, repr=False)
    headers: dict[str, str] = field(default_factory=dict, repr=False)


def resolve_secrets(
    server: ServerDefinition, lookup: KeychainLookup = keychain_key
) -> ServerSecrets:
    """Resolve every keychain reference of ``server`` (blocking: call it off the loop)."""
    env = {name: _value(item, lookup) for name, item in server.config.env.items()}
    headers = {name: _value(item, lookup) for name, item in server.config.headers.items()}
    env.update(server.client_env)
    headers.update(server.client_headers)
    for _name, value in server.client_env:
        register_secret(value)
    for value in headers.values():
        register_secret(value)
    return ServerSecrets(env=env, headers=headers)


def _value(item: str | KeychainRef, lookup: KeychainLookup) -> str:
    if isinstance(item, str):
        return item
    secret = lookup(item.keychain)
    if not secret:
        raise MissingSecret(
            f"the keychain has no entry {item.keychain!r} (store it with "
            f"`relavium-lsp keys set {item.keychain}`)"
        )
    register_secret(secret)
    return item.prefix + secret
