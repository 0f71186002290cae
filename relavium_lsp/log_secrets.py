"""The secrets no log record may contain: registered once, redacted by every log handler.

Kept apart from :mod:`relavium_lsp.logs` (which configures handlers and knows pygls) so that
code below the editor-protocol layers — the MCP pool resolving keychain references — can
register what it holds.
"""

from __future__ import annotations

import threading

MIN_SECRET_LENGTH = 8
_secrets: set[str] = set()
_secrets_lock = threading.Lock()


def register_secret(value: str) -> None:
    """Make sure ``value`` never appears in a log record."""
    if len(value) >= MIN_SECRET_LENGTH:
        with _secrets_lock:
            _secrets.add(value)


def redact(text: str) -> str:
    """``text`` with every registered secret replaced."""
    with _secrets_lock:
        secrets = tuple(_secrets)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "[redacted]")
    return text


def contains_registered_secret(text: str) -> bool:
    """Whether ``text`` holds a registered secret (an API key, the database key, …)."""
    with _secrets_lock:
        secrets = tuple(_secrets)
    lowered = text.lower()
    # Case-folded: the database key is registered in hex, which has two spellings.
    return any(secret.lower() in lowered for secret in secrets)
