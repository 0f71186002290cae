"""Scrub key material out of text that came back from a provider.

Provider error bodies sometimes echo the credential they rejected, whole or masked
(``Incorrect API key provided: sk-proj-****abcd``). Anything that leaves an adapter as an
:class:`~relavium_lsp.llm.seam.LlmError` message passes through :func:`redact_secrets` first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[redacted]"

# Shorter overlaps with a key are too likely to be ordinary words; eight characters of a
# random key, though, identify it well enough that they must not leak.
_MIN_FRAGMENT = 8

_KEY_LIKE = re.compile(
    r"(?i)"
    r"\b(?:sk|pk|rk|ak|key)-[A-Za-z0-9_\-*.]{6,}"  # sk-…, sk-ant-…, sk-proj-…, masked forms
    r"|\bbearer\s+\S+"  # an echoed Authorization header value
    r"|\*{4,}[A-Za-z0-9_\-]*"  # a masked key tail (****abcd)
    r"|\b[A-Za-z0-9_\-]{32,}\b"  # long opaque tokens
)


def _fragment_spans(text: str, secret: str) -> list[tuple[int, int]]:
    """Spans of ``text`` covered by any 8-character substring of ``secret``."""
    if len(secret) < _MIN_FRAGMENT or len(text) < _MIN_FRAGMENT:
        return []
    grams = {secret[i : i + _MIN_FRAGMENT] for i in range(len(secret) - _MIN_FRAGMENT + 1)}
    spans: list[tuple[int, int]] = []
    for start in range(len(text) - _MIN_FRAGMENT + 1):
        if text[start : start + _MIN_FRAGMENT] in grams:
            end = start + _MIN_FRAGMENT
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
    return spans


def redact_secrets(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Replace every secret (or any long fragment of one) and key-like token in ``text``."""
    for secret in secrets:
        if not secret:
            continue
        text = text.replace(secret, REDACTED)
        spans = _fragment_spans(text, secret)
        for start, end in reversed(spans):
            text = text[:start] + REDACTED + text[end:]
    return _KEY_LIKE.sub(REDACTED, text)


def user_safe_detail(text: str, secrets: Iterable[str | None] = (), *, limit: int = 300) -> str:
    """A provider's error text made fit for a user: one line, redacted, bounded."""
    single_line = " ".join(text.split())
    cleaned = redact_secrets(single_line, secrets)
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 1].rstrip() + "…"
    return cleaned
