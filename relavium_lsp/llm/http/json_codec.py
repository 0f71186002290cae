"""JSON decoding of provider stream events: the fastest decoder, the standard library's answer.

Stream events are decoded once per delta, so the decoder is a large part of an adapter's
cost. :func:`loads` uses ``msgspec`` (measured fastest on Chat Completions and Messages
events, see ``bench/providers.py``) and falls back to :func:`json.loads` for anything it
refuses — invalid UTF-8 (read as U+FFFD, as the text path does), lone surrogates, ``NaN`` —
so every input decodes exactly as the standard library would or fails the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec

Loads = Callable[[str | bytes], Any]
_fast_decode = msgspec.json.Decoder().decode


def standard_loads(data: str | bytes) -> Any:
    """The standard library's reading (bytes as UTF-8 with replacement characters)."""
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    return json.loads(data)


def loads(data: str | bytes) -> Any:
    """Parse one JSON document; ``ValueError`` when it is not JSON."""
    try:
        return _fast_decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return standard_loads(data)
