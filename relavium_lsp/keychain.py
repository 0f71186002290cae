"""Which OS keychain (if any) relavium-lsp trusts with secrets.

Shared by the database key and the provider API keys. A backend counts only if it can keep a
secret at all (not keyring's fail/null backends or an empty chain) and is one keyring itself
recommends (priority ≥ 1) — plaintext-file backends such as ``keyrings.alt`` score below that
and are used only when the user selects one explicitly (``PYTHON_KEYRING_BACKEND`` or a
keyring config file). Otherwise callers use their documented headless fallback.
"""

from __future__ import annotations

import os
from typing import Any

import keyring
import keyring.backends.chainer
import keyring.backends.fail
import keyring.backends.null
import keyring.core

RECOMMENDED_PRIORITY = 1


def usable_keychain() -> Any | None:
    """The keyring backend to use, or ``None`` when there is no trustworthy one."""
    backend = keyring.get_keyring()
    if not can_keep_secrets(backend):
        return None
    if _explicitly_chosen() or _recommended(backend):
        return backend
    return None


def can_keep_secrets(backend: Any) -> bool:
    """Whether ``backend`` can store anything (not the fail/null/empty-chain backends)."""
    if isinstance(backend, keyring.backends.fail.Keyring | keyring.backends.null.Keyring):
        return False
    if isinstance(backend, keyring.backends.chainer.ChainerBackend):
        return any(can_keep_secrets(member) for member in backend.backends)
    return True


def _recommended(backend: Any) -> bool:
    if isinstance(backend, keyring.backends.chainer.ChainerBackend):
        return any(_recommended(member) for member in backend.backends)
    try:
        return float(backend.priority) >= RECOMMENDED_PRIORITY
    except Exception:
        return False


def _explicitly_chosen() -> bool:
    return bool(os.environ.get("PYTHON_KEYRING_BACKEND")) or keyring.core.load_config() is not None
