"""Decoding JSON a peer sent: size and nesting bounded before the decoder runs (issue 35).

Both front ends (LSP over ``Content-Length`` framing, ACP over newline-delimited JSON) decode
every incoming message through :func:`decode_message`, so one rule holds for both:

* the bytes are at most ``max_bytes`` (the framers cap what they hold; this is the decode
  boundary's own check);
* nesting is at most :data:`MAX_NESTING_DEPTH` deep, counted by a cheap scan *before*
  ``json.loads`` runs: CPython's decoder recurses per level, and 20 KB of ``[`` raised
  ``RecursionError`` outside every handler and ended the process. A JSON-RPC message is a
  few levels deep; 128 leaves room for any honest tool schema or settings object;
* anything the decoder raises for text it does not accept (syntax, extra data, invalid UTF-8,
  an integer past the interpreter's digit limit) is one :class:`UntrustedJson` whose
  ``reason`` names the problem, never the content.

When a message cannot be decoded its id may still be wanted for the error answer:
:func:`top_level_member` reads one top-level member (``id``, ``method``) without decoding the
rest. :class:`RateLimitedLog` keeps a flood of one mistake from flooding the log.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from itertools import accumulate
from typing import Any

# The largest message accepted. An editor's biggest honest message is a document's text
# (didOpen/didChange, an ACP prompt's embedded file); 64 MiB is far beyond any file a chat
# server should be sent whole.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_NESTING_DEPTH = 128
# A string literal (escapes included) — its brackets are text — or one bracket.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1
_QUOTE = ord('"')
# After a top-level member's name: the colon and a plain value (a number or a string).
_PLAIN_VALUE = re.compile(rb'\s*:\s*(-?[0-9]{1,19}(?![0-9.eE])|"[^"\\]*(?:\\.[^"\\]*)*")')
# How many tokens :func:`top_level_member` looks at before giving up (bounded CPU).
MAX_MEMBER_SCAN_TOKENS = 100_000


class UntrustedJson(ValueError):
    """Bytes a peer sent that are not JSON we accept; ``reason`` says why (no content)."""

    def __init__(self, reason: str, *, too_deep: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.too_deep = too_deep


def nesting_depth(data: bytes) -> int:
    """How deep arrays and objects nest in ``data`` (brackets inside strings are text).

    C-level work only: strings cut out by a regex, everything but brackets deleted, the
    running depth accumulated. Malformed input gives some number; the decoder refuses it.
    """
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def nests_deeper_than(data: bytes, limit: int) -> bool:
    """Whether ``data`` nests more than ``limit`` levels (the common case costs two counts)."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    return nesting_depth(data) > limit


def decode_message(
    data: bytes,
    *,
    max_bytes: int,
    max_depth: int = MAX_NESTING_DEPTH,
    object_hook: Callable[[dict[str, Any]], Any] | None = None,
) -> Any:
    """``json.loads(data)`` for bytes a peer sent, or :class:`UntrustedJson`.

    ``object_hook`` is the decoder's; what it raises for a decoded object is not caught here
    (the caller knows what its hook means, e.g. pygls's "cannot deserialise this request").
    """
    if len(data) > max_bytes:
        raise UntrustedJson(f"larger than {max_bytes} bytes")
    if nests_deeper_than(data, max_depth):
        raise UntrustedJson(f"nests deeper than {max_depth} levels", too_deep=True)
    try:
        text = data.decode("utf-8")  # the protocols say UTF-8 (json.loads would guess UTF-16/32)
    except UnicodeDecodeError:
        raise UntrustedJson("not UTF-8 text") from None
    try:
        return json.loads(text, object_hook=object_hook)
    except json.JSONDecodeError as error:
        raise UntrustedJson(f"not JSON ({error.msg})") from None
    except ValueError as error:  # e.g. an integer past sys.get_int_max_str_digits()
        raise UntrustedJson(f"not JSON we accept ({type(error).__name__})") from None
    except RecursionError:  # the scan bounds nesting; a deep hook or small stack still must not
        raise UntrustedJson("nests too deep to decode", too_deep=True) from None


def top_level_member(data: bytes, name: str) -> int | str | None:
    """The integer or string value of the top-level object's member ``name``, if it has one.

    For answering a message that cannot be decoded (too deep): walks the tokens at depth one
    only, up to :data:`MAX_MEMBER_SCAN_TOKENS` of them, and decodes just that value.
    """
    wanted = json.dumps(name).encode()
    depth = 0
    for count, token in enumerate(_TOKEN.finditer(data)):
        if count >= MAX_MEMBER_SCAN_TOKENS:
            return None
        start, end = token.span()
        first = data[start]
        if first == _QUOTE:
            if depth == 1 and end - start == len(wanted) and data.startswith(wanted, start):
                value = _PLAIN_VALUE.match(data, end)
                if value is not None:  # a member name (a colon follows), with a plain value
                    decoded: Any = json.loads(value.group(1))
                    return decoded if isinstance(decoded, int | str) else None
            continue
        depth += _STEP[first]
        if depth <= 0:
            return None  # the top-level value has ended
    return None


class RateLimitedLog:
    """Logs at most ``burst`` records per ``window_s`` seconds; the rest are counted.

    The next record logged after a quiet spell says how many were left out. Owned by one
    connection (no module state), so two connections never share a budget.
    """

    def __init__(
        self,
        logger: logging.Logger,
        *,
        burst: int = 10,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._burst = burst
        self._window_s = window_s
        self._clock = clock
        self._window_start = clock()
        self._logged = 0
        self._suppressed = 0

    def log(self, level: int, message: str, *args: object) -> None:
        """Log ``message % args`` unless this window's budget is spent."""
        now = self._clock()
        if now - self._window_start >= self._window_s:
            self._window_start, self._logged = now, 0
        if self._logged >= self._burst:
            self._suppressed += 1
            return
        self._logged += 1
        if self._suppressed:
            message += " (%d similar lines left out before this one)"
            args = (*args, self._suppressed)
            self._suppressed = 0
        self._logger.log(level, message, *args)
