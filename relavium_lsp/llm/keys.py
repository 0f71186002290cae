"""Provider API keys: the OS keychain first, then environment variables.

Keys live under keyring service ``relavium`` with the provider id as the account. The
fallback variable is ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY`` for those two ids (and the
platforms' own variables for the ids ``azure``, ``gemini`` and ``bedrock``) and
``<PROVIDER_ID>_API_KEY`` (upper-cased, other characters as ``_``) for any other — a key is
never borrowed from another provider's variable, since that would send it to a different
host. Nothing here logs, prints or raises with a key in it.
"""

from __future__ import annotations

import logging
import os
import re

import keyring
import keyring.errors

from relavium_lsp.contracts.model_setup import KeyStorage
from relavium_lsp.errors import RelaviumError
from relavium_lsp.log_secrets import register_secret

logger = logging.getLogger(__name__)

KEYRING_SERVICE = "relavium"
_BUILTIN_ENV_VARS = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    # The variables each platform's own tools read, for the presets' ids.
    "azure": "AZURE_OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "bedrock": "AWS_BEARER_TOKEN_BEDROCK",
}
_PROVIDER_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_PLAINTEXT_BACKENDS = ("PlaintextKeyring",)


class KeychainUnavailable(RelaviumError):
    """No usable OS keychain; the message explains the environment-variable alternative."""

    code = "validation"


def valid_provider_id(provider_id: str) -> bool:
    """Whether ``provider_id`` is a plausible provider id (letters, digits, ``_.-``)."""
    return _PROVIDER_ID.match(provider_id) is not None


def key_env_var(provider_id: str) -> str:
    """The environment variable that may hold this provider's key."""
    builtin = _BUILTIN_ENV_VARS.get(provider_id)
    if builtin is not None:
        return builtin
    normalized = "".join(ch if ch.isalnum() else "_" for ch in provider_id.upper())
    return f"{normalized}_API_KEY"


def keychain_problem() -> str | None:
    """Why ``keys set`` must not store a key with the active backend, or ``None``."""
    backend = keyring.get_keyring()
    if backend.priority <= 0:
        return "no OS keychain backend is available"
    name = type(backend).__name__
    if name in _PLAINTEXT_BACKENDS and not os.environ.get("PYTHON_KEYRING_BACKEND"):
        # Chosen only because nothing better exists; it writes keys to a plain file.
        return f"the only keyring backend available ({name}) stores keys in a plain file"
    return None


def keychain_key(provider_id: str) -> str | None:
    """The key stored in the keychain, or ``None`` (also when there is no keychain)."""
    try:
        value = keyring.get_password(KEYRING_SERVICE, provider_id)
    except Exception as exc:  # any backend failure means "not in the keychain"
        logger.debug("keychain lookup for %s unavailable: %s", provider_id, type(exc).__name__)
        return None
    return value or None


def lookup_api_key(provider_id: str) -> str | None:
    """The provider's key from the keychain, else its environment variable, else ``None``."""
    key = keychain_key(provider_id) or os.environ.get(key_env_var(provider_id), "").strip()
    if key:
        register_secret(key)  # redacted from logs, refused as a context variable
    return key or None


def keychain_unavailable_message(reason: str, provider_id: str) -> str:
    """What to tell a user whose keychain cannot hold the key, and what to do instead."""
    return (
        f"the OS keychain cannot be used: {reason}. Set the environment variable "
        f"{key_env_var(provider_id)} instead (relavium-lsp never writes API keys to plain "
        "files), or install a keychain backend such as the Secret Service (GNOME Keyring, "
        "KWallet)."
    )


def _unavailable(reason: str, provider_id: str) -> KeychainUnavailable:
    return KeychainUnavailable(keychain_unavailable_message(reason, provider_id))


def store_api_key(provider_id: str, key: str) -> KeyStorage:
    """Save ``key`` in the OS keychain; :class:`KeychainUnavailable` if there is none.

    Returns ``"file"`` when the keyring backend keeps keys in a file (only ever one the user
    chose explicitly, such as keyrings.alt's, see :func:`keychain_problem`), else
    ``"keychain"``.
    """
    register_secret(key)
    problem = keychain_problem()
    if problem is not None:
        raise _unavailable(problem, provider_id)
    backend = keyring.get_keyring()
    try:
        backend.set_password(KEYRING_SERVICE, provider_id, key)
    except Exception as exc:  # backends raise all sorts; the key must not reach the message
        raise _unavailable(f"the keychain refused it ({type(exc).__name__})", provider_id) from None
    # keyrings.alt's file backends (and any like them) say where their file is.
    return "file" if hasattr(backend, "file_path") else "keychain"


def delete_api_key(provider_id: str) -> bool:
    """Remove the stored key; ``False`` if there was none."""
    try:
        keyring.delete_password(KEYRING_SERVICE, provider_id)
    except keyring.errors.PasswordDeleteError:
        return False
    except Exception as exc:
        raise _unavailable(f"the keychain failed ({type(exc).__name__})", provider_id) from None
    return True
