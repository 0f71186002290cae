"""Telling a secret from an ordinary value before we store it (issue 16).

``startSession`` ``context.variables`` are stored in plain in the session, echoed in its
result and in ``session:started``, and exported. A value that is a known secret (a configured
API key, the database key — see :func:`secret_reason`) or is shaped like one (a provider key
prefix, a long high-entropy token) is refused instead; the reason never contains the value.

Ordinary identifiers stay allowed: UUIDs, git commit hashes (hex up to 40 digits), words,
paths and sentences.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from itertools import pairwise

from relavium_lsp.log_secrets import MIN_SECRET_LENGTH, contains_registered_secret

# Environment variables that hold secrets by name (provider keys, tokens, the database key).
_SECRET_ENV_NAME = re.compile(r"(_API_KEY|_TOKEN|_SECRET|_PASSWORD|^RELAVIUM_DB_KEY)$")
# Well-known key prefixes: OpenAI/Anthropic/DeepSeek (sk-), Stripe, Groq, xAI, GitHub, GitLab,
# Slack, AWS access keys, Google API keys, Hugging Face, Perplexity, Replicate, NVIDIA.
_KEY_PREFIX = re.compile(
    r"^(sk-|sk_live_|sk_test_|rk_live_|gsk_|xai-|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|"
    r"xox[abprs]-|AKIA|ASIA|AIza|hf_|pplx-|r8_|nvapi-)[A-Za-z0-9_\-]{16,}$"
)
_TOKEN_CHARS = re.compile(r"^[A-Za-z0-9_\-+/=]+$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_SEPARATORS = re.compile(r"[_\-+/=]")
MIN_RANDOM_CORE = 24
MIN_CLASS_CHANGES = 0.5
LONG_TOKEN_CHARS = 32
MIN_TOKEN_ENTROPY_BITS = 3.5  # per character; English-ish identifiers stay below it
MAX_HEX_IDENTIFIER = 40  # a git commit hash; the database key is 64 hex digits


def secret_reason(value: str) -> str | None:
    """Why ``value`` must not be stored as plain context, or None; never quotes the value."""
    if _known_secret(value):
        return "it is a configured secret (an API key or the database key)"
    for token in value.split():
        if _KEY_PREFIX.match(token):
            return "it looks like a provider API key"
        if _high_entropy_token(token):
            return "it looks like a key or token (a long random string)"
    return None


def _known_secret(value: str) -> bool:
    if contains_registered_secret(value):
        return True
    for name, secret in os.environ.items():
        secret = secret.strip()
        if len(secret) >= MIN_SECRET_LENGTH and _SECRET_ENV_NAME.search(name) and secret in value:
            return True
    return False


def _high_entropy_token(token: str) -> bool:
    """A long random-looking token: hex past a commit hash, or base62/64 noise.

    Random base62 changes character class (upper, lower, digit) between neighbours about
    60 % of the time; a CamelCase or snake_case identifier, however long, far less.
    """
    if len(token) < LONG_TOKEN_CHARS or not _TOKEN_CHARS.match(token) or _UUID.match(token):
        return False
    if _HEX.match(token):
        return len(token) > MAX_HEX_IDENTIFIER
    core = _SEPARATORS.sub("", token)
    if len(core) < MIN_RANDOM_CORE or not (
        any(ch.isupper() for ch in core)
        and any(ch.islower() for ch in core)
        and any(ch.isdigit() for ch in core)
    ):
        return False
    return (
        _class_changes(core) >= MIN_CLASS_CHANGES
        and _entropy_bits_per_char(core) >= MIN_TOKEN_ENTROPY_BITS
    )


def _class_changes(text: str) -> float:
    classes = ["u" if ch.isupper() else "l" if ch.islower() else "d" for ch in text]
    changes = sum(1 for left, right in pairwise(classes) if left != right)
    return changes / max(1, len(text) - 1)


def _entropy_bits_per_char(token: str) -> float:
    counts = Counter(token)
    total = len(token)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


# Free text (a note, a Markdown document) wraps values in quotes, backticks, ``KEY=…`` and
# ``key: …``: split on those too, but not on ``-`` or ``_`` (key prefixes contain them).
_TEXT_SEPARATORS = re.compile(r"[\s`'\"=:,;()\[\]{}<>|*]+")


def text_secret_reason(text: str) -> str | None:
    """Why free text must not be stored (naming the line), or None; never quotes the value."""
    if _known_secret(text):
        return "it holds a configured secret (an API key or the database key)"
    for number, line in enumerate(text.splitlines(), start=1):
        for token in _TEXT_SEPARATORS.split(line):
            if _KEY_PREFIX.match(token):
                return f"line {number} looks like it holds a provider API key"
            if _high_entropy_token(token):
                return f"line {number} looks like it holds a key or token (a long random string)"
    return None
