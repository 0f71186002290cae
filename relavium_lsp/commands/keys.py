"""``relavium-lsp keys set|delete|list``: manage provider API keys in the OS keychain.

A key is read from a hidden prompt, or from standard input when that is not a terminal
(``printf %s "$KEY" | relavium-lsp keys set openai``) — never from the command line, where
it would land in shell history and process listings. Nothing here ever prints a key.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
import tomllib
from pathlib import Path

from relavium_lsp.commands import Subcommands
from relavium_lsp.llm.keys import (
    KeychainUnavailable,
    delete_api_key,
    key_env_var,
    keychain_key,
    keychain_problem,
    keychain_unavailable_message,
    store_api_key,
    valid_provider_id,
)

_BUILTIN = ("anthropic", "openai")


def register(subparsers: Subcommands) -> None:
    """Add ``keys`` and its three actions."""
    parser = subparsers.add_parser(
        "keys",
        help="store, remove or list provider API keys (OS keychain)",
        description="Manage provider API keys in the OS keychain (service 'relavium').",
    )
    actions = parser.add_subparsers(dest="keys_action", metavar="ACTION", required=True)
    set_parser = actions.add_parser(
        "set", help="store a key (read from a hidden prompt or standard input)"
    )
    set_parser.add_argument("provider", help="provider id, e.g. openai or anthropic")
    # Captured only to refuse it without echoing: a key typed here is already in history.
    set_parser.add_argument("unexpected", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    set_parser.set_defaults(handler=_set)
    delete_parser = actions.add_parser("delete", help="remove a stored key")
    delete_parser.add_argument("provider")
    delete_parser.set_defaults(handler=_delete)
    list_parser = actions.add_parser("list", help="show which providers have a key")
    list_parser.add_argument("provider", nargs="*", help="providers to show (default: known ones)")
    list_parser.set_defaults(handler=_list)


def _checked_provider(provider: str) -> str | None:
    # Never echo a rejected value: it may well be a key pasted in the wrong place.
    if provider.lower().startswith(("sk-", "sk_")):
        print("error: that looks like an API key, not a provider id", file=sys.stderr)
        return None
    if valid_provider_id(provider):
        return provider
    print(
        "error: not a valid provider id (use letters, digits, '_', '.', '-'; e.g. openai)",
        file=sys.stderr,
    )
    return None


def _read_key(provider: str) -> str:
    if sys.stdin.isatty():
        return getpass.getpass(f"API key for {provider} (input hidden): ").strip()
    return sys.stdin.read().strip()


def _set(arguments: argparse.Namespace) -> int:
    if arguments.unexpected:
        print(
            "error: `keys set` never takes the key as an argument (it would be kept in your "
            "shell history); run `relavium-lsp keys set PROVIDER` and paste the key at the "
            "hidden prompt, or pipe it on standard input",
            file=sys.stderr,
        )
        return 2
    provider = _checked_provider(arguments.provider)
    if provider is None:
        return 2
    problem = keychain_problem()
    if problem is not None:
        # Say so before asking for a secret that could not be kept anyway.
        print(f"error: {keychain_unavailable_message(problem, provider)}", file=sys.stderr)
        return 1
    key = _read_key(provider)
    if not key:
        print("error: no key given (empty input)", file=sys.stderr)
        return 2
    if any(character.isspace() for character in key):
        print("error: the key contains whitespace; paste it exactly", file=sys.stderr)
        return 2
    try:
        store_api_key(provider, key)
    except KeychainUnavailable as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    print(f"Stored the API key for {provider} in the OS keychain.")
    return 0


def _delete(arguments: argparse.Namespace) -> int:
    provider = _checked_provider(arguments.provider)
    if provider is None:
        return 2
    try:
        removed = delete_api_key(provider)
    except KeychainUnavailable as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    if removed:
        print(f"Removed the API key for {provider} from the OS keychain.")
    else:
        print(f"No API key for {provider} was stored in the OS keychain.")
    return 0


def _configured_providers() -> list[str]:
    """Provider ids named in ``~/.relavium/config.toml`` (best effort; errors ignored)."""
    home = os.environ.get("RELAVIUM_HOME")
    path = Path(home) if home else Path.home() / ".relavium"
    try:
        document = tomllib.loads((path / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    providers = document.get("providers")
    if not isinstance(providers, dict):
        return []
    return [name for name in providers if isinstance(name, str) and valid_provider_id(name)]


def _list(arguments: argparse.Namespace) -> int:
    requested = [name for name in arguments.provider if _checked_provider(name)]
    if len(requested) != len(arguments.provider):
        return 2
    names = requested or sorted(set(_BUILTIN) | set(_configured_providers()))
    problem = keychain_problem()
    if problem is not None:
        print(f"note: {problem}; keys can only come from environment variables.")
    width = max(len(name) for name in names)
    for name in names:
        in_keychain = "yes" if keychain_key(name) else "no"
        variable = key_env_var(name)
        in_env = "set" if os.environ.get(variable, "").strip() else "not set"
        print(f"{name:<{width}}  keychain: {in_keychain:<3}  {variable}: {in_env}")
    return 0
